package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.micrometer.observation.Observation;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * One caller's acquisition, as an explicit state machine. Every transition is a compare-and-set,
 * so of the parties that may act on it at once (the acquire reply, the grant message, the renewal
 * tick, the deadline, an interrupt, shutdown) exactly one wins each step:
 *
 * <pre>
 *   SENDING --reply: queued--> QUEUED --tick: entry gone--> REQUEUING --reply: queued--> QUEUED
 *      |                         |                              |
 *      +--- end(true): a grant --+------------------------------+--> GRANTED
 *      +--- end(false): rejected, failed, timed out, abandoned -+--> ENDED
 * </pre>
 *
 * Who takes the entry out of Redis when the wait ends without a permit: if it ended from
 * {@link Phase#QUEUED}, the party that ended it (with {@code cancel}, which hands over or gives
 * back a grant that crossed the decision); if it ended while a call was in flight
 * ({@link Phase#SENDING}, {@link Phase#REQUEUING}), the sender, when its reply finds the wait
 * {@link Phase#ENDED}, since its call may have created the entry after any earlier cancel. So
 * exactly one party cleans up, and no permit leaks. Only a {@link Phase#QUEUED} acquisition is
 * heartbeated by the tick.
 *
 * <p>The deadline ends only a {@link Phase#QUEUED} wait ({@link #expire()}): while a call is in
 * flight, its reply says what Redis decided (a grant stands, a queue entry is cancelled at once),
 * so a late reply of a healthy Redis is never turned into a rejection or an outage.
 */
final class PendingAcquisition {

    /** Where an acquisition stands. */
    enum Phase { SENDING, QUEUED, REQUEUING, GRANTED, ENDED }

    final String id;
    final int count;
    final Duration maxWait;
    /** The lease its permit gets: the semaphore's, or the one of this call. */
    final Duration leaseTime;
    final long startNanos;
    final long deadlineNanos;
    /** A permit this instance granted on its own during an outage, written back whatever the limit (acquire.lua, mode 4). */
    final boolean overLimit;
    final CompletableFuture<Permit> future = new CompletableFuture<>();
    /** The caller's observation when it asked (null if none): parent of the acquire and the hold observations. */
    final @Nullable Observation callerObservation;
    /** The {@code semaphore.acquire} observation, stopped when {@link #future} completes. */
    final Observation observation;
    /** Where the reply of its first call is handled: the callbacks, or the caller that awaits it. */
    final Executor firstReply;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.SENDING);
    private volatile @Nullable ScheduledFuture<?> deadline;
    /** The wait's time is up: a call in flight at the deadline finds it so when its reply comes. */
    private volatile boolean expired;

    PendingAcquisition(String id, int count, Duration maxWait, Duration leaseTime, long startNanos,
                       @Nullable Observation callerObservation, Observation observation, Executor firstReply,
                       boolean overLimit) {
        this.id = id;
        this.overLimit = overLimit;
        this.callerObservation = callerObservation;
        this.observation = observation;
        this.firstReply = firstReply;
        this.count = count;
        this.maxWait = maxWait;
        this.leaseTime = leaseTime;
        this.startNanos = startNanos;
        this.deadlineNanos = startNanos + maxWait.toNanos();
    }

    /**
     * Ends the wait, with a permit or without.
     *
     * @return the phase it ended from, or null when it had ended already (someone else decided)
     */
    @Nullable Phase end(boolean granted) {
        Phase target = granted ? Phase.GRANTED : Phase.ENDED;
        while (true) {
            Phase before = now();
            if (before == Phase.GRANTED || before == Phase.ENDED) {
                return null;
            }
            if (phase.compareAndSet(before, target)) {
                ScheduledFuture<?> timer = deadline;
                if (timer != null) {
                    timer.cancel(false);
                }
                return before;
            }
        }
    }

    /**
     * The deadline passed. A queued wait ends now (its ender cancels the entry in Redis); one whose
     * call is in flight ({@link Phase#SENDING}, {@link Phase#REQUEUING}) is left to that call's
     * reply, which ends it if it queued it again (see {@link #isExpired()}).
     *
     * @return whether this ended the wait (it was queued)
     */
    boolean expire() {
        expired = true;
        return phase.compareAndSet(Phase.QUEUED, Phase.ENDED);
    }

    /** @return whether the deadline passed (set before the phase is read, so a reply that queues the wait sees it) */
    boolean isExpired() {
        return expired;
    }

    /** Redis confirmed the queue entry (first join or re-join). @return false if the wait ended meanwhile */
    boolean queued() {
        return phase.compareAndSet(Phase.SENDING, Phase.QUEUED) || phase.compareAndSet(Phase.REQUEUING, Phase.QUEUED);
    }

    /** The queue entry vanished from Redis. @return true when this caller now re-joins the queue */
    boolean requeue() {
        return phase.compareAndSet(Phase.QUEUED, Phase.REQUEUING);
    }

    /** @return whether Redis has confirmed the queue entry and nobody has ended the wait yet */
    boolean isQueued() {
        return now() == Phase.QUEUED;
    }

    /** @return whether the wait ended with a permit */
    boolean isGranted() {
        return now() == Phase.GRANTED;
    }

    /** @return whether the wait has time left */
    boolean hasTimeLeft() {
        return System.nanoTime() - deadlineNanos < 0;
    }

    void deadline(ScheduledFuture<?> deadline) {
        this.deadline = deadline;
        Phase now = now();
        if (now == Phase.GRANTED || now == Phase.ENDED) {
            deadline.cancel(false);
        }
    }

    Duration waited() {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /** @return the state now: never null, as the reference starts set and is only ever set to a state */
    private Phase now() {
        return Objects.requireNonNull(phase.get());
    }
}
