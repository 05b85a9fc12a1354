package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * Whether Redis can be reached, for the semaphores with a degraded mode (one per registry: they
 * share the library's connection). Down from the moment a call of such a semaphore found Redis
 * unreachable ({@link #found}) until a probe has heard Redis answer and then answer again
 * {@link #SETTLE} later; then the registry's semaphores reconcile ({@link Recovering}).
 *
 * <p>Why wait {@link #SETTLE} after the first answer: the other instances notice Redis back at
 * their own probes, up to {@link #PROBE_PERIOD} and a connection later. An instance that granted
 * through Redis at once could fill the limit before another had written back the permits it
 * granted on its own; within the settle time every instance that reaches Redis has written its
 * own back, while each still grants only out of its share.
 */
final class Outage {

    /** How often a probe asks Redis while it cannot be reached. */
    static final Duration PROBE_PERIOD = Duration.ofMillis(200);
    /** How long after Redis first answers the semaphores go on deciding on their own (see above). */
    static final Duration SETTLE = Duration.ofSeconds(1);

    /** The registry, told once Redis answers again: each degraded semaphore writes back and goes through Redis. */
    interface Recovering {

        void redisAnswersAgain(Duration outage);
    }

    private final ScriptRunner runner;
    private final TaskScheduler scheduler;
    private final Executor callbacks;
    private final Recovering recovering;
    private final BooleanSupplier closed;
    /** What the probe's errors name. */
    private final SemaphoreKeys probeKeys;
    /** Run just before the semaphores reconcile: a seam for tests of what happens then (nothing otherwise). */
    private volatile Runnable beforeRecovery = () -> { };
    /** Since when Redis is down for the semaphores, null while it is not. */
    private final AtomicReference<@Nullable Instant> downSince = new AtomicReference<>();

    Outage(ScriptRunner runner, TaskScheduler scheduler, Executor callbacks, String keyPrefix, BooleanSupplier closed,
           Recovering recovering) {
        this.runner = runner;
        this.scheduler = scheduler;
        this.callbacks = callbacks;
        this.recovering = recovering;
        this.closed = closed;
        this.probeKeys = SemaphoreKeys.of(keyPrefix, "degraded-mode-probe");
    }

    /** For tests: {@code action} runs once Redis answered and before the semaphores reconcile. */
    void beforeRecovery(Runnable action) {
        this.beforeRecovery = action;
    }

    /** @return whether the semaphores with a degraded mode decide without Redis now */
    boolean down() {
        return downSince.get() != null;
    }

    /**
     * A call found Redis failing with {@code failure}.
     *
     * @return whether that failure means Redis cannot be reached (no connection, no answer): then
     *         the outage is on (it may have been already), and probed until Redis answers
     */
    boolean found(Throwable failure) {
        if (!unreachable(failure)) {
            return false;
        }
        if (downSince.compareAndSet(null, Instant.now())) {
            probeLater();
        }
        return true;
    }

    /**
     * @return whether {@code failure} says Redis cannot be reached, as opposed to a Redis that
     *         answers and refuses (an ACL, a missing command), replicas that did not acknowledge,
     *         or a registry shutting down: those are no outage, and stay loud
     */
    static boolean unreachable(Throwable failure) {
        Reason reason = Reason.of(failure);
        return reason == Reason.NO_ANSWER || reason == Reason.UNREACHABLE || reason == Reason.UNAVAILABLE;
    }

    private void probeLater() {
        if (closed.getAsBoolean()) {
            return;
        }
        try {
            scheduler.schedule(this::probe, Instant.now().plus(PROBE_PERIOD));
        } catch (RejectedExecutionException e) {
            // the registry is closing
        }
    }

    /** Asks Redis; once it answered, asks again {@link #SETTLE} later, and that answer ends the outage. */
    private void probe() {
        runner.ping(probeKeys).whenCompleteAsync((pong, error) -> {
            if (error != null) {
                probeLater();
                return;
            }
            try {
                scheduler.schedule(this::confirm, Instant.now().plus(SETTLE));
            } catch (RejectedExecutionException e) {
                // the registry is closing
            }
        }, callbacks);
    }

    private void confirm() {
        runner.ping(probeKeys).whenCompleteAsync((pong, error) -> {
            Instant since = downSince.get();
            if (error != null || since == null || closed.getAsBoolean()) {
                probeLater();
                return;
            }
            // Down no more before the semaphores reconcile: one that finds Redis failing again
            // while it writes back starts the next outage.
            downSince.set(null);
            beforeRecovery.run();
            recovering.redisAnswersAgain(Duration.between(since, Instant.now()));
        }, callbacks);
    }
}
