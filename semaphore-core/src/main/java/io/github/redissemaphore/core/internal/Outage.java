package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * Whether Redis can be reached, for the semaphores with a degraded mode (one per registry: they
 * share the library's connection). Down from the moment a call of such a semaphore found Redis
 * unreachable ({@link #found}); a probe asks Redis every {@link #PROBE_PERIOD}. Its first answer
 * starts the settle time: the semaphores write back the permits they granted on their own and
 * grant no more ({@link Recovering#settling}); {@link #SETTLE} later, a second answer ends the
 * outage and they go through Redis again ({@link Recovering#redisAnswersAgain}). A failure in
 * between (the second probe, a write-back) makes it down again ({@link Recovering#settleFailed}).
 *
 * <p>Why the settle time: the other instances notice Redis back at their own probes, up to
 * {@link #PROBE_PERIOD}, a connection and some scheduling later. An instance that granted through
 * Redis at once could fill the limit while another still granted out of its share, or before it
 * had written its permits back. An instance that settles grants nothing, so once the first goes
 * through Redis, every instance that noticed Redis back within the settle time has its permits in
 * Redis and grants only through Redis.
 */
final class Outage {

    /** How often a probe asks Redis while it cannot be reached. */
    static final Duration PROBE_PERIOD = Duration.ofMillis(200);
    /** How long after Redis first answers the semaphores go on deciding on their own (see above). */
    static final Duration SETTLE = Duration.ofSeconds(1);

    /** The registry, told of each step of a recovery, which it passes on to its degraded semaphores. */
    interface Recovering {

        /** Redis answered a probe: write back, grant nothing more until {@link #redisAnswersAgain}. */
        void settling();

        /** Redis failed again while the semaphores settled: they decide on their own again. */
        void settleFailed();

        /** The outage of {@code outage} is over: calls go through Redis again. */
        void redisAnswersAgain(Duration outage);
    }

    private final ScriptRunner runner;
    private final TaskScheduler scheduler;
    private final Executor callbacks;
    private final Recovering recovering;
    private final BooleanSupplier closed;
    /** What the probe's errors name. */
    private final SemaphoreKeys probeKeys;
    /** Guards {@code settling}, and the end of an outage with it. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Run just before the semaphores reconcile: a seam for tests of what happens then (nothing otherwise). */
    private volatile Runnable beforeRecovery = () -> { };
    /** Since when Redis is down for the semaphores, null while it is not. */
    private final AtomicReference<@Nullable Instant> downSince = new AtomicReference<>();
    /** Counts the settle times begun: a confirmation belongs to the latest, or to none. */
    private final AtomicLong settles = new AtomicLong();
    /** System.nanoTime() when the last outage ended. */
    private volatile long recoveredNanos = System.nanoTime() - SETTLE.toNanos();
    /** Whether a settle time runs (guarded by {@code lock}). */
    private boolean settling;

    Outage(ScriptRunner runner, TaskScheduler scheduler, Executor callbacks, String keyPrefix, BooleanSupplier closed,
           Recovering recovering) {
        this.runner = runner;
        this.scheduler = scheduler;
        this.callbacks = callbacks;
        this.recovering = recovering;
        this.closed = closed;
        this.probeKeys = SemaphoreKeys.of(keyPrefix, "degraded-mode-probe");
    }

    /** For tests: {@code action} runs once Redis answered a probe and before the semaphores write back. */
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
     * @return whether that failure means Redis cannot be reached: no connection (refused, closed
     *         under the call), or no answer within the Redis timeout while nothing else this JVM
     *         sent was answered for at least half that time either (late replies of a busy machine
     *         are no outage); then the outage is on (it may have been already), and probed until
     *         Redis answers
     */
    boolean found(Throwable failure) {
        if (!unreachable(failure) || Reason.of(failure) == Reason.NO_ANSWER && !silent() || justRecovered()) {
            return false;
        }
        if (downSince.compareAndSet(null, Instant.now())) {
            probeLater();
        } else if (endSettling()) {
            // Failed again while the semaphores settled: the confirmation to come belongs to none.
            settles.incrementAndGet();
            recovering.settleFailed();
            probeLater();
        }
        return true;
    }

    /**
     * @return whether the last outage ended less than {@link #SETTLE} ago: a failure then is the
     *         caller's (as with reject), not a new outage, so that a call caught in the recovery
     *         (sent before, answered late) does not send an instance back to deciding alone while
     *         the others go through Redis
     */
    private boolean justRecovered() {
        return downSince.get() == null && System.nanoTime() - recoveredNanos < SETTLE.toNanos();
    }

    /** @return whether Redis has answered none of this JVM's calls for half the Redis timeout or more */
    private boolean silent() {
        return System.nanoTime() - runner.unansweredSinceNanos() >= runner.timeout().toNanos() / 2;
    }

    /**
     * @return whether {@code failure} says Redis cannot be reached, as opposed to a Redis that
     *         answers and refuses (an ACL, a missing command, a script's error), replicas that did
     *         not acknowledge, a call cancelled, or a registry shutting down: those are no outage,
     *         and stay loud
     */
    static boolean unreachable(Throwable failure) {
        Reason reason = Reason.of(failure);
        if (reason == Reason.NO_ANSWER || reason == Reason.UNREACHABLE) {
            return true;
        }
        if (reason != Reason.UNAVAILABLE) {
            return false;
        }
        // UNAVAILABLE: any other failure; an outage only if nothing in it says Redis answered or
        // the call was given up here.
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable c = failure; c != null && seen.add(c); c = c.getCause()) {
            String type = c.getClass().getSimpleName();
            if (c instanceof CancellationException || type.contains("CommandExecution")
                    || type.contains("NoScript") || type.contains("Busy")) {
                return false;
            }
        }
        return true;
    }

    private boolean endSettling() {
        lock.lock();
        try {
            boolean was = settling;
            settling = false;
            return was;
        } finally {
            lock.unlock();
        }
    }

    private boolean startSettling() {
        lock.lock();
        try {
            if (settling || downSince.get() == null) {
                return false;
            }
            settling = true;
            return true;
        } finally {
            lock.unlock();
        }
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

    /** Asks Redis; once it answered, the semaphores settle, and an answer {@link #SETTLE} later ends the outage. */
    private void probe() {
        runner.ping(probeKeys).whenCompleteAsync((pong, error) -> {
            if (error != null || !startSettling()) {
                probeLater();
                return;
            }
            long settle = settles.incrementAndGet();
            beforeRecovery.run();
            recovering.settling();
            try {
                scheduler.schedule(() -> confirm(settle), Instant.now().plus(SETTLE));
            } catch (RejectedExecutionException e) {
                // the registry is closing
            }
        }, callbacks);
    }

    private void confirm(long settle) {
        runner.ping(probeKeys).whenCompleteAsync((pong, error) -> {
            if (settles.get() != settle || closed.getAsBoolean()) {
                return; // failed meanwhile: a probe runs again already
            }
            if (error != null) {
                if (endSettling()) {
                    settles.incrementAndGet();
                    recovering.settleFailed();
                }
                probeLater();
                return;
            }
            Instant since;
            lock.lock();
            try {
                since = downSince.getAndSet(null);
                settling = false;
                recoveredNanos = System.nanoTime();
            } finally {
                lock.unlock();
            }
            if (since != null) {
                recovering.redisAnswersAgain(Duration.between(since, Instant.now()));
            }
        }, callbacks);
    }
}
