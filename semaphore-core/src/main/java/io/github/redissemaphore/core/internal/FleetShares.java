package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.PresenceScript;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * The shares of a degraded mode that takes them from the fleet ({@code when-unavailable: local}
 * without {@code local-permits}): each instance records that it uses the semaphore (presence.lua,
 * one call per base name every {@link #PERIOD}, none while Redis is down), and keeps the
 * instances Redis last showed. While Redis cannot be reached, it takes its part of the permits by
 * its rank among them, so the parts of the instances last seen add up to the permits exactly.
 * "Last seen" is every instance a reply of the last {@link #SEEN_FOR} before the newest reply
 * named: a reply that came late or not at all, or one made before another instance recorded
 * itself, does not make this instance forget one it saw (its share is the smaller for it).
 */
final class FleetShares {

    /** How often this instance records itself, per base name. */
    static final Duration PERIOD = Duration.ofSeconds(1);
    /** How long a record counts: a stopped instance drops out of the others' shares after it. */
    static final Duration SEEN_FOR = Duration.ofSeconds(5);

    private final ScriptRunner runner;
    private final TaskScheduler scheduler;
    private final String keyPrefix;
    private final BooleanSupplier down;
    /** This registry's id among the instances. */
    private final String instance = Ids.clientId();
    /** The base names this instance records itself for, with the key it does so on. */
    private final Map<String, SemaphoreKeys> used = new ConcurrentHashMap<>();
    /** Per base name, each instance the replies named, with the System.nanoTime() of the newest reply that did. */
    private final Map<String, Map<String, Long>> seen = new ConcurrentHashMap<>();
    /** Guards the start of {@code announcing}. */
    private final ReentrantLock lock = new ReentrantLock();
    private volatile @Nullable ScheduledFuture<?> announcing;

    FleetShares(ScriptRunner runner, TaskScheduler scheduler, String keyPrefix, BooleanSupplier down) {
        this.runner = runner;
        this.scheduler = scheduler;
        this.keyPrefix = keyPrefix;
        this.down = down;
    }

    /** This instance uses {@code baseName}, whose shares come from the fleet: it records itself from now on. */
    void use(String baseName) {
        if (used.putIfAbsent(baseName, SemaphoreKeys.instances(keyPrefix, baseName)) != null) {
            return;
        }
        announce(baseName, used.get(baseName));
        lock.lock();
        try {
            if (announcing == null) {
                try {
                    announcing = scheduler.scheduleAtFixedRate(this::announceAll, PERIOD);
                } catch (RejectedExecutionException e) {
                    // the registry is closing
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return this instance's part of {@code permits} among the instances Redis last showed using
     *         {@code baseName}: {@code permits / n}, one more for the first {@code permits % n} by
     *         rank; 0 while Redis has not shown this instance among them
     */
    int share(String baseName, int permits) {
        List<String> instances = lastSeen(baseName);
        int rank = instances.indexOf(instance);
        if (rank < 0) {
            return 0;
        }
        return permits / instances.size() + (rank < permits % instances.size() ? 1 : 0);
    }

    /** @return how many instances Redis last showed using {@code baseName} (0: none yet) */
    int instancesSeen(String baseName) {
        return lastSeen(baseName).size();
    }

    /** @return the instances named within {@link #SEEN_FOR} before the newest reply, sorted: their ranks */
    private List<String> lastSeen(String baseName) {
        Map<String, Long> named = seen.get(baseName);
        if (named == null) {
            return List.of();
        }
        long newest = named.values().stream().mapToLong(Long::longValue).max().orElse(0);
        return named.entrySet().stream().filter(e -> newest - e.getValue() <= SEEN_FOR.toNanos())
                .map(Map.Entry::getKey).sorted().toList();
    }

    void stop() {
        ScheduledFuture<?> task = announcing;
        if (task != null) {
            task.cancel(false);
        }
    }

    private void announceAll() {
        if (!down.getAsBoolean()) {
            used.forEach(this::announce);
        }
    }

    private void announce(String baseName, SemaphoreKeys keys) {
        runner.send(keys, new PresenceScript(instance, SEEN_FOR)).thenAccept(instances -> {
            long now = System.nanoTime();
            Map<String, Long> named = seen.computeIfAbsent(baseName, name -> new ConcurrentHashMap<>());
            instances.forEach(other -> named.put(other, now));
            // Forget those long gone, so the map stays as small as the fleet.
            named.values().removeIf(at -> now - at > 2 * SEEN_FOR.toNanos());
        });
    }
}
