package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.internal.redis.CancelScript;
import io.github.redissemaphore.core.internal.redis.CancelScript.Cancelled;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * The cancel of one semaphore's waits whose time is up, and what it tells their callers. The
 * cancel's reply says what Redis decided: a grant that crossed the deadline is the caller's permit
 * ({@link Decision#grantedToken}), else the caller is rejected. A late reply is waited for, up to
 * the Redis timeout counted from the cancel's own send (not from the wait's start: a late reply of
 * a healthy Redis is no outage). The caller hears {@link SemaphoreUnavailableException} only when
 * Redis did not answer in time: the cancel timed out, or Redis has answered nothing at all for the
 * Redis timeout since a call sent before the cancel ({@link #watchSilence}). Whichever answers the
 * caller first decides; a reply that comes after it gives back whatever it found.
 * {@link Acquisitions} acts on the decision; this class only sends, times and reads.
 */
final class DeadlineCancel {

    /**
     * What the caller of a wait whose time is up hears.
     *
     * @param grantedToken the token of a grant the cancel found (its claim confirmed as a full
     *                     lease), or 0
     * @param sentNanos    when the cancel was sent: the grant's lease is counted from it
     * @param serverMicros the server time of the cancel's reply (0 without one)
     * @param failure      null, or why Redis did not tell in time whether the wait was granted
     * @param cleanUp      whether the entry may still be in Redis and must be taken out (a cancel
     *                     that failed); after a silence, the cancel's own late reply gives back
     */
    record Decision(long grantedToken, long sentNanos, long serverMicros,
                    @Nullable SemaphoreUnavailableException failure, boolean cleanUp) {
    }

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final ScriptRunner runner;
    private final ReplyFigures figures;
    private final BackgroundCalls backgroundCalls;

    DeadlineCancel(SemaphoreIdentity identity, SemaphoreContext context, ReplyFigures figures,
                   BackgroundCalls backgroundCalls) {
        this.identity = identity;
        this.context = context;
        this.runner = context.runner();
        this.figures = figures;
        this.backgroundCalls = backgroundCalls;
    }

    /**
     * Cancels the queued wait in Redis, asynchronously (the scheduler's thread is free at once,
     * whatever Redis does), and hands the caller's {@link Decision} to {@code decide}: on the
     * callbacks, or on the scheduler's thread when the silence decides.
     */
    void send(PendingAcquisition pending, Consumer<Decision> decide) {
        long sentNanos = System.nanoTime();
        AtomicBoolean answered = new AtomicBoolean();
        CompletableFuture<Cancelled> cancel = runner.send(identity.keys(),
                new CancelScript(identity.limit(), pending.id, false));
        watchSilence(answered, cancel, sentNanos, decide);
        whenDone(cancel, (reply, error) -> {
            if (!answered.compareAndSet(false, true)) {
                // The caller has been answered: whatever this found goes back.
                backgroundCalls.cancel(pending.id, pending.leaseTime);
            } else if (error != null) {
                SemaphoreException failure = ScriptRunner.failure(error);
                // what the failure says (a refusal, a shutdown, no connection), else the silence
                Reason reason = Reason.of(failure);
                // The entry may still be there, or granted: taken back once Redis answers.
                decide.accept(new Decision(0, sentNanos, 0, new SemaphoreUnavailableException(identity.name(),
                        reason == Reason.UNAVAILABLE ? Reason.NO_ANSWER : reason,
                        "The wait for semaphore '" + identity.name() + "' ended, and Redis did not answer within "
                        + runner.timeout().toMillis() + " ms whether it had been granted: " + failure.getMessage(),
                        failure), true));
            } else {
                figures.takeIn(reply.usage());
                // A grant just before the deadline (its message is still on the way): the cancel
                // confirmed its claim as a full lease.
                decide.accept(new Decision(reply.grantedToken(), sentNanos, reply.usage().serverMicros(), null,
                        false));
            }
        });
    }

    /**
     * While the cancel is out: if Redis had already stopped answering before it was sent (a call
     * of this JVM has been out unanswered since then), the caller hears
     * {@link SemaphoreUnavailableException} once Redis has answered nothing for the Redis timeout,
     * which may be before the cancel's own timeout ends. Any reply of Redis meanwhile, to any call
     * of this JVM, means it answers: then only the cancel's own timeout ends the wait without its
     * reply. Timed by the scheduler.
     */
    private void watchSilence(AtomicBoolean answered, CompletableFuture<?> cancel, long sentNanos,
                              Consumer<Decision> decide) {
        long timeout = runner.timeout().toNanos();
        long silentSince = runner.unansweredSinceNanos();
        if (silentSince - sentNanos >= 0) {
            return;
        }
        try {
            ScheduledFuture<?> check = context.scheduler().schedule(() -> {
                long silent = System.nanoTime() - runner.unansweredSinceNanos();
                if (cancel.isDone() || silent < timeout || !answered.compareAndSet(false, true)) {
                    return;
                }
                decide.accept(new Decision(0, sentNanos, 0, new SemaphoreUnavailableException(identity.name(),
                        Reason.NO_ANSWER, "The wait for semaphore '" + identity.name() + "' ended, and Redis has"
                        + " answered nothing for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms, so whether it"
                        + " had been granted is not known", null), false));
            }, Instant.now().plusNanos(Math.max(silentSince + timeout - System.nanoTime(), 0)));
            cancel.whenComplete((reply, error) -> check.cancel(false));
        } catch (RejectedExecutionException e) {
            // Shutting down: the cancel's own timeout bounds the answer.
        }
    }

    /**
     * Runs {@code action} with the outcome of {@code call} on the callbacks, or where the call
     * completed if they no longer take tasks (shutting down): a caller is always answered.
     */
    private <T> void whenDone(CompletableFuture<T> call, BiConsumer<? super T, ? super Throwable> action) {
        call.whenComplete((value, error) -> {
            try {
                context.callbacks().execute(() -> action.accept(value, error));
            } catch (RejectedExecutionException e) {
                action.accept(value, error);
            }
        });
    }
}
