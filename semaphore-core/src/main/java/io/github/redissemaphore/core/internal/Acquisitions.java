package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreListener.Outcome;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.internal.redis.AcquireScript;
import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.GrantRunner;
import io.github.redissemaphore.core.internal.redis.RenewScript;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The waits of one semaphore's callers, from the first {@code acquire} call to a permit or an
 * exception. Every party that can decide a wait (the acquire reply, the grant message, the
 * renewal tick's reply, the deadline, an interrupt or cancel, shutdown) decides it here, through
 * the transitions of its {@link PendingAcquisition}, so the races of a wait are in one class.
 */
final class Acquisitions implements LeaseKeeper.WaiterReplies {

    private static final Logger log = EngineLogs.SEMAPHORE;

    private final SemaphoreIdentity identity;
    private final SemaphoreSettings settings;
    private final SemaphoreKeys keys;
    private final SemaphoreContext context;
    private final SemaphoreLedger ledger;
    private final ReplyFigures figures;
    private final BackgroundCalls backgroundCalls;
    private final RenewalTick tick;
    /** What the permits it grants do when their holder moves them. */
    private final HeldPermits heldPermits;
    /** Sends the calls that grant, acknowledged by replicas when the semaphore waits for them. */
    private final GrantRunner grants;
    /** Cancels the waits whose time is up, and tells what their callers hear. */
    private final DeadlineCancel deadlineCancel;

    Acquisitions(SemaphoreIdentity identity, SemaphoreContext context, SemaphoreLedger ledger, ReplyFigures figures,
                 BackgroundCalls backgroundCalls, RenewalTick tick, HeldPermits heldPermits, GrantRunner grants) {
        this.identity = identity;
        this.settings = identity.settings();
        this.keys = identity.keys();
        this.context = context;
        this.ledger = ledger;
        this.figures = figures;
        this.backgroundCalls = backgroundCalls;
        this.tick = tick;
        this.heldPermits = heldPermits;
        this.grants = grants;
        this.deadlineCancel = new DeadlineCancel(identity, context, figures, backgroundCalls);
    }

    /**
     * Runs {@code started} (the count-down of {@link SemaphoreLedger#started(long)}) when the
     * first reply has been handled, or when starting failed before that. From the moment the
     * acquisition's observation starts, whatever fails ends it: a {@link RuntimeException} that is
     * no Redis failure (a scheduler that refuses a task, an inbox that cannot subscribe, a bug)
     * fails the pending future, so the observation and the listeners' view of the acquisition end,
     * and nothing is left waiting, here or in Redis.
     */
    PendingAcquisition begin(int permits, Duration maxWait, Duration leaseTime, boolean awaited, boolean overLimit,
                             Runnable started) {
        context.checkOpen();
        Observations observations = context.observations();
        PendingAcquisition pending = new PendingAcquisition(Ids.permitId(), permits, maxWait, leaseTime,
                System.nanoTime(), observations.current(), observations.acquisition(identity, permits),
                awaited ? new WaitingCaller(context.callbacks()) : context.callbacks(), overLimit);
        pending.future.whenComplete((permit, error) -> ended(pending, permit, error));
        boolean wait = !maxWait.isZero();
        try {
            routeGrantTo(pending, wait);
            send(pending, wait, pending.firstReply, () -> timeWait(pending), started);
        } catch (RuntimeException e) {
            try {
                failed(pending, e);
            } finally {
                started.run();
            }
        }
        return pending;
    }

    private String name() {
        return identity.name();
    }

    /** A caller that will wait is routed its grant, before Redis can make one. */
    private void routeGrantTo(PendingAcquisition pending, boolean wait) {
        if (wait) {
            context.inbox().listenFor(keys);
            ledger.waitFor(pending);
        }
    }

    /**
     * Starting an acquisition failed outside Redis: the caller hears of it (its future fails with
     * {@code error}, which ends the observation), and what a call may have left in Redis is taken
     * back. If the acquisition was decided already (a grant whose tick could not be scheduled),
     * its outcome stands.
     */
    private void failed(PendingAcquisition pending, RuntimeException error) {
        if (pending.end(false) == null) {
            log.warn("Semaphore '{}': an acquisition that had been decided failed afterwards", name(), error);
            return;
        }
        forget(pending);
        pending.future.completeExceptionally(error);
        cleanUp(pending);
    }

    /** The wait is timed from the caller's start, whenever the reply that queued it came. */
    private void timeWait(PendingAcquisition pending) {
        pending.deadline(context.scheduler().schedule(() -> deadlinePassed(pending),
                Instant.now().plusNanos(Math.max(pending.deadlineNanos - System.nanoTime(), 0))));
    }

    /**
     * The call for the pending acquisition. One that waits carries the queue's bound, and, when
     * predicted timeouts are refused, the wait it has left as the longest predicted wait it accepts.
     */
    private AcquireScript acquire(PendingAcquisition pending, boolean wait) {
        Duration longest = wait && settings.rejectPredictedTimeouts()
                ? Duration.ofNanos(Math.max(pending.deadlineNanos - System.nanoTime(), 1_000_000)) : Duration.ZERO;
        return new AcquireScript(identity.limit(), pending.id, pending.count, pending.leaseTime, wait,
                settings.fair(), context.waiterHeartbeat(), identity.inbox(), Ids.owner(),
                wait ? settings.maxWaiters() : 0, longest, pending.overLimit);
    }

    /**
     * Sends {@code acquire} for the pending acquisition (its first try, or a re-join after its
     * queue entry vanished) and handles the reply on {@code replies}: the callbacks, or for the
     * first call of a synchronous acquire, which is this one awaited, the caller's thread while it
     * waits ({@link #await}, {@link WaitingCaller}).
     *
     * @param whenQueued runs when Redis queued it and it still waits
     * @param afterReply runs once the reply has been handled, whatever it was
     */
    private void send(PendingAcquisition pending, boolean wait, Executor replies, Runnable whenQueued,
                      Runnable afterReply) {
        long sentNanos = System.nanoTime();
        CompletableFuture<Acquired> call = grants.send(keys, acquire(pending, wait));
        call.whenCompleteAsync((reply, error) -> {
            try {
                if (apply(pending, call, reply, error, sentNanos)) {
                    whenQueued.run();
                }
            } catch (RuntimeException e) {
                failed(pending, e);
            } finally {
                afterReply.run();
            }
        }, replies);
    }

    /**
     * Applies the reply (or failure) of an {@code acquire} call. A reply that finds the wait ended
     * meanwhile undoes what the call did, as {@link PendingAcquisition} describes.
     *
     * @return whether Redis queued it and it still waits
     */
    private boolean apply(PendingAcquisition pending, CompletableFuture<Acquired> call, @Nullable Acquired reply,
                          @Nullable Throwable error, long sentNanos) {
        if (error != null) {
            if (pending.end(false) != null) {
                forget(pending);
                pending.future.completeExceptionally(ScriptRunner.failure(error));
            }
            if (!pending.isGranted()) {
                // The call may have reached Redis before failing here: take back what it may have
                // done, in the background.
                cancelAfterCall(pending, call);
            }
            return false;
        }
        // A call that did not fail has a reply: the runner never completes one with null.
        Acquired replied = Objects.requireNonNull(reply, "reply");
        figures.takeIn(replied.usage());
        switch (replied.status()) {
            case GRANTED -> {
                if (pending.end(true) != null) {
                    grant(pending, replied.token(), sentNanos, replied.usage().serverMicros());
                } else if (!pending.isGranted()) {
                    cancelAfterCall(pending, call);
                }
            }
            case QUEUED -> {
                if (pending.queued()) {
                    tick.wake();
                    context.listeners().queued(name(), pending.count, replied.usage().waiters(),
                            replied.predictedWaitMillis() >= 0 ? Duration.ofMillis(replied.predictedWaitMillis()) : null);
                    if (replied.rateHeld()) {
                        context.listeners().delayedByRate(name(), pending.count);
                    }
                    return true;
                }
                if (!pending.isGranted()) {
                    cancelAfterCall(pending, call);
                }
            }
            case REFUSED -> {
                if (pending.end(false) != null) {
                    reject(pending);
                }
            }
            case FULL, TOO_LONG, RATE_LIMITED -> {
                if (pending.end(false) != null) {
                    refuseAtOnce(pending, replied);
                }
            }
        }
        return false;
    }

    /**
     * The queue entry of a caller that still waits vanished from Redis: it joins again, at the back.
     * If the wait's deadline passed while the re-join was in flight, its reply decides: a grant is
     * the caller's, and a wait it queued again is cancelled now (see {@link #deadlinePassed}).
     */
    @Override
    public void rejoin(PendingAcquisition pending) {
        send(pending, true, context.callbacks(), () -> {
            if (pending.isExpired()) {
                deadlinePassed(pending);
            }
        }, () -> { });
    }

    Permit await(PendingAcquisition pending) throws InterruptedException {
        try {
            if (pending.firstReply instanceof WaitingCaller caller) {
                caller.runUntil(pending.future);
            }
            return pending.future.get();
        } catch (InterruptedException e) {
            abandon(pending, new CancellationException("interrupted while waiting for semaphore '" + name() + "'"));
            throw e;
        } catch (CancellationException e) {
            if (Thread.interrupted()) {
                throw new InterruptedException(e.getMessage());
            }
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SemaphoreException cause) {
                throw cause;
            }
            throw new SemaphoreException("Acquiring semaphore '" + name() + "' failed", e.getCause());
        }
    }

    private void ended(PendingAcquisition pending, Permit permit, Throwable error) {
        Outcome outcome = permit != null ? Outcome.ACQUIRED
                : error instanceof SemaphoreRejectedException ? Outcome.REJECTED
                : error instanceof CancellationException ? Outcome.CANCELLED : Outcome.ERROR;
        Observations.acquisitionEnded(pending.observation, outcome, error);
        context.listeners().acquisitionEnded(name(), pending.count, outcome, pending.waited());
        if (error instanceof CancellationException) {
            abandon(pending, error);
        }
    }

    /**
     * The wait ends without a permit (interrupt, cancel, shutdown): leave the queue, leak nothing.
     *
     * @return the clean-up in Redis, done when Redis answered (or gave up on)
     */
    CompletableFuture<Void> abandon(PendingAcquisition pending, Throwable cause) {
        CompletableFuture<Void> cleanUp = rejectUnlessDecided(pending, cause);
        if (cleanUp == null) {
            // Granted meanwhile: the permit goes back as soon as it exists.
            pending.future.thenAccept(Permit::release);
            return CompletableFuture.completedFuture(null);
        }
        return cleanUp;
    }

    /** Redis did not answer the caller's heartbeats for the Redis timeout: the wait fails now. */
    @Override
    public void unavailable(PendingAcquisition pending, SemaphoreUnavailableException failure) {
        rejectUnlessDecided(pending, failure);
    }

    /**
     * Ends the wait without a permit, unless someone decided it already: the caller hears
     * {@code cause}, and the queue entry goes (if a call is in flight, its sender takes it out).
     *
     * @return the clean-up in Redis, or null when the wait had been decided already
     */
    private @Nullable CompletableFuture<Void> rejectUnlessDecided(PendingAcquisition pending, Throwable cause) {
        PendingAcquisition.Phase from = pending.end(false);
        if (from == null) {
            return null;
        }
        forget(pending);
        pending.future.completeExceptionally(cause);
        return from == PendingAcquisition.Phase.QUEUED ? cleanUp(pending) : CompletableFuture.completedFuture(null);
    }

    /**
     * The wait's time is up. A queued wait is cancelled in Redis ({@link DeadlineCancel}), whose
     * decision ends it here: a grant that crossed the deadline is the caller's permit, else the
     * caller is rejected, or told that Redis did not answer in time. A wait whose call is in
     * flight (a re-join) is decided by that call's reply instead, which cancels at once if it
     * queued the wait again ({@link #rejoin}).
     */
    private void deadlinePassed(PendingAcquisition pending) {
        if (!pending.expire()) {
            return;
        }
        deadlineCancel.send(pending, decision -> {
            SemaphoreUnavailableException failure = decision.failure();
            if (failure != null) {
                forget(pending);
                pending.future.completeExceptionally(failure);
                if (decision.cleanUp()) {
                    cleanUp(pending);
                }
            } else if (decision.grantedToken() > 0) {
                handOver(pending, decision.grantedToken(), decision.sentNanos(), decision.serverMicros());
            } else {
                reject(pending);
            }
        });
    }

    /**
     * Waiter {@code id} was granted ({@code token > 0}) or can never be ({@code token == 0}):
     * the inbox heard it ({@code confirmedMicros} 0: the grant is a claim to confirm) or a renew
     * or cancel reply said so (the server time of that reply, which extended the claim to a full lease).
     */
    @Override
    public void granted(String id, long token, long heardNanos, long confirmedMicros) {
        PendingAcquisition pending = ledger.waiter(id);
        if (pending == null) {
            return;
        }
        if (token > 0) {
            if (pending.end(true) != null) {
                handOver(pending, token, heardNanos, confirmedMicros);
            }
        } else if (pending.end(false) != null) {
            reject(pending);
        }
    }

    /**
     * A grant from the queue (made by another party's call): with replicas to wait for, this
     * JVM's own write confirms it at once, acknowledged by them before the caller hears of it;
     * without, the next tick confirms it with every claim heard meanwhile.
     */
    private void handOver(PendingAcquisition pending, long token, long heardNanos, long confirmedMicros) {
        if (!grants.waitsForReplicas()) {
            grant(pending, token, heardNanos, confirmedMicros);
            return;
        }
        long sentNanos = System.nanoTime();
        grants.send(keys, new RenewScript(identity.limit(), context.waiterHeartbeat(), identity.inbox(),
                        List.of(pending.id)))
                .whenCompleteAsync((reply, error) -> {
                    Throwable failure = error != null ? ScriptRunner.failure(error) : null;
                    if (reply != null) {
                        figures.takeIn(reply.usage());
                        if (reply.statuses().get(0) <= 0) {
                            failure = new SemaphoreUnavailableException(name(), Reason.UNAVAILABLE,
                                    "A permit of semaphore '" + name()
                                    + "' was granted, but its claim ended before this JVM could confirm it", null);
                        }
                    }
                    if (failure == null) {
                        grant(pending, token, sentNanos, reply.usage().serverMicros());
                    } else {
                        // (a grant the replicas did not acknowledge has been given back already)
                        forget(pending);
                        pending.future.completeExceptionally(failure);
                        cleanUp(pending);
                    }
                }, context.callbacks());
    }

    private void grant(PendingAcquisition pending, long token, long heardNanos, long confirmedMicros) {
        // A claim lasts the waiter heartbeat from its grant, which was before we heard of it:
        // half of it is what this JVM counts on until the confirmation comes back.
        boolean confirmed = confirmedMicros > 0;
        long leaseEnds = heardNanos + (confirmed ? pending.leaseTime : context.waiterHeartbeat().dividedBy(2))
                .toNanos();
        DefaultPermit permit = new DefaultPermit(heldPermits, name(), pending.id, pending.count, token,
                pending.leaseTime, leaseEnds, confirmedMicros, confirmed);
        // Held before it stops waiting, so the semaphore never looks idle in between.
        ledger.hold(permit.lease());
        forget(pending);
        ledger.nowHeld(permit.lease(), pending.callerObservation);
        try {
            // An unconfirmed claim makes the next tick come within a waiter tick (see RenewalTick#delay):
            // its renew confirms every claim heard meanwhile at once, and none of a lease released before.
            tick.wake();
        } finally {
            // The caller hears of its permit even if a timer could not be set.
            if (!pending.future.complete(permit)) {
                heldPermits.release(permit.lease());
            }
        }
    }

    private void reject(PendingAcquisition pending) {
        forget(pending);
        context.listeners().rejected(name(), pending.count, SemaphoreRejectedException.Reason.WAIT_TIMED_OUT);
        pending.future.completeExceptionally(
                new SemaphoreRejectedException(name(), pending.count, pending.maxWait));
    }

    /**
     * Redis refused to queue the caller: the queue was full, or its predicted wait too long; or it
     * did not wait and the rate's window had no slot (the prediction is then when one frees).
     */
    private void refuseAtOnce(PendingAcquisition pending, Acquired reply) {
        Duration predicted = reply.predictedWaitMillis() >= 0 ? Duration.ofMillis(reply.predictedWaitMillis()) : null;
        boolean full = reply.status() == Acquired.Status.FULL;
        boolean rate = reply.status() == Acquired.Status.RATE_LIMITED;
        String why = full
                ? "at once: queue full: " + reply.usage().waiters() + " of " + settings.maxWaiters() + " waiting"
                : rate ? "now: the rate's window is full: " + settings.rateLimit() + " grants per "
                        + settings.ratePeriod().toMillis() + " ms"
                : "at once: its predicted wait is longer than the " + pending.maxWait.toMillis() + " ms it allows";
        SemaphoreRejectedException.Reason reason = full ? SemaphoreRejectedException.Reason.QUEUE_FULL
                : rate ? SemaphoreRejectedException.Reason.RATE_LIMITED
                : SemaphoreRejectedException.Reason.PREDICTED_WAIT_TOO_LONG;
        forget(pending);
        context.listeners().rejected(name(), pending.count, reason);
        pending.future.completeExceptionally(new SemaphoreRejectedException(name(), pending.count, pending.maxWait,
                reason, predicted, why));
    }

    private void forget(PendingAcquisition pending) {
        ledger.stopWaiting(pending);
    }

    /** Takes back, off the caller's thread, whatever a call for this acquisition may have left in Redis. */
    private void cancelAfterCall(PendingAcquisition pending, CompletableFuture<Acquired> call) {
        if (call.isDone()) {
            cleanUp(pending);
        } else {
            // Not before the call itself has gone (or is known never to go): a call lent off the
            // caller's thread, and this clean-up, may otherwise reach Redis in either order, and an
            // acquire landing after its cancel would queue a waiter nobody waits for.
            call.whenCompleteAsync((reply, error) -> cleanUp(pending), context.callbacks());
        }
    }

    /** Takes waiter or claim {@code id} out of Redis, in the background (see {@link BackgroundCalls#cancel}). */
    private CompletableFuture<Void> cleanUp(PendingAcquisition pending) {
        return backgroundCalls.cancel(pending.id, pending.leaseTime);
    }
}
