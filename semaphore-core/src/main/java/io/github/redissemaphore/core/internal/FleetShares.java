package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.PresenceScript;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import java.time.Duration;
import java.util.ArrayList;
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
    /** The instances Redis last showed per base name, sorted: the ranks. */
    private final Map<String, List<String>> lastSeen = new ConcurrentHashMap<>();
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
        List<String> seen = lastSeen.get(baseName);
        int rank = seen == null ? -1 : seen.indexOf(instance);
        if (seen == null || rank < 0) {
            return 0;
        }
        int instances = seen.size();
        return permits / instances + (rank < permits % instances ? 1 : 0);
    }

    /** @return how many instances Redis last showed using {@code baseName} (0: none yet) */
    int instancesSeen(String baseName) {
        List<String> seen = lastSeen.get(baseName);
        return seen == null ? 0 : seen.size();
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
            List<String> sorted = new ArrayList<>(instances);
            sorted.sort(null);
            lastSeen.put(baseName, List.copyOf(sorted));
        });
    }
}
