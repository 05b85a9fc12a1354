package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.redis.ReplicaWait;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A part of one {@link DefaultRedisSemaphore} with one job. The state the parts share is the
 * semaphore's (the permits this JVM holds, the callers it has waiting, its settings, keys and
 * tick); a part keeps only what its own job needs, and reaches the other parts through the
 * semaphore.
 */
abstract class SemaphorePart {

    /** Every part logs under {@link DefaultRedisSemaphore}: one category for a semaphore's messages. */
    static final Logger log = LoggerFactory.getLogger(DefaultRedisSemaphore.class);
    /** How often a clean-up that Redis did not answer is sent again. */
    private static final Duration RETRY = Duration.ofSeconds(1);

    final DefaultRedisSemaphore semaphore;
    final DefaultSemaphoreRegistry registry;
    final ScriptRunner commands;
    final ReplicaWait replicas;
    final SemaphoreSettings settings;
    final SemaphoreKeys keys;
    /** Where grants of this semaphore's waiters reach this JVM. */
    final String inboxChannel;
    final Map<String, DefaultPermit> held;
    final Map<String, PendingAcquisition> waiting;
    final RenewalTick tick;

    SemaphorePart(DefaultRedisSemaphore semaphore) {
        this.semaphore = semaphore;
        this.registry = semaphore.registry;
        this.commands = semaphore.commands;
        this.replicas = semaphore.replicas;
        this.settings = semaphore.settings;
        this.keys = semaphore.keys;
        this.inboxChannel = semaphore.inboxChannel;
        this.held = semaphore.held;
        this.waiting = semaphore.waiting;
        this.tick = semaphore.tick;
    }

    final String name() {
        return semaphore.name();
    }

    /** Takes in the usage figures of a reply; see {@link DefaultRedisSemaphore#seen(Usage)}. */
    final void seen(Usage usage) {
        semaphore.seen(usage);
    }

    /**
     * Sends a call that must reach Redis (a clean-up): on failure it is sent again every
     * {@link #RETRY}, for as long as the entry it is about could still be in Redis (its lease or
     * heartbeat, whichever is longer), and not after shutdown.
     *
     * @param lease the lease of the entry
     * @return completes when Redis answered, or when it gave up
     */
    final <T> CompletableFuture<Void> persist(String what, Duration lease, Supplier<CompletableFuture<T>> call,
                                              Consumer<T> onReply) {
        long untilNanos = System.nanoTime() + Math.max(lease.toNanos(), registry.waiterHeartbeat().toNanos());
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable[] attempt = new Runnable[1];
        attempt[0] = () -> call.get().whenCompleteAsync((reply, error) -> {
            if (error == null) {
                onReply.accept(reply);
                done.complete(null);
            } else if (System.nanoTime() - untilNanos < 0 && !registry.isClosed()) {
                try {
                    registry.scheduler().schedule(attempt[0], Instant.now().plus(RETRY));
                } catch (RejectedExecutionException e) {
                    done.complete(null);
                }
            } else {
                log.debug("Could not {} semaphore '{}'; it ends with its lease or heartbeat", what, name(), error);
                done.complete(null);
            }
        }, registry.callbacks());
        attempt[0].run();
        return done;
    }
}
