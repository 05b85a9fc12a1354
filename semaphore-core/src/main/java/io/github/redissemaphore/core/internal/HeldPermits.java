package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.internal.redis.LeaseScript;
import io.github.redissemaphore.core.internal.redis.LeaseScript.Leased;
import io.github.redissemaphore.core.internal.redis.ReleaseScript;
import io.github.redissemaphore.core.internal.redis.ReleaseScript.Released;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;

/**
 * The permits of one semaphore that this JVM holds or takes over, and what moves them: released (all of a lease, part of it, by id from any JVM,
 * or by force), adopted from another JVM, or extended. Each move is one script call; where a
 * lease this JVM held is given back, its holder waits for Redis only briefly and only while Redis
 * answers, and a call Redis does not answer is sent again in the background until Redis answers
 * or the lease ends.
 */
final class HeldPermits implements DefaultPermit.PermitActions {

    private static final Logger log = EngineLogs.SEMAPHORE;
    private static final String GONE = "Redis no longer has it (expired, released by force, or wiped)";
    /**
     * The longest a holder waits for the reply to its release while Redis answers: a reply comes
     * in a millisecond or two, and within a few dozen on a loaded machine; past this the release
     * goes on in the background (on the one connection, ahead of whatever this JVM sends next),
     * so giving a permit back never holds a caller for the Redis timeout.
     */
    static final Duration RELEASE_WAIT = Duration.ofMillis(500);
    /** How often a holder waiting for its release's reply looks whether Redis still answers. */
    private static final Duration ANSWERING_CHECK = Duration.ofMillis(20);

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final SemaphoreLedger ledger;
    private final ReplyFigures figures;
    private final LeaseKeeper.Watchdog watchdog;
    private final BackgroundCalls backgroundCalls;
    private final RenewalTick tick;

    HeldPermits(SemaphoreIdentity identity, SemaphoreContext context, SemaphoreLedger ledger, ReplyFigures figures,
                LeaseKeeper.Watchdog watchdog, BackgroundCalls backgroundCalls, RenewalTick tick) {
        this.identity = identity;
        this.context = context;
        this.ledger = ledger;
        this.figures = figures;
        this.watchdog = watchdog;
        this.backgroundCalls = backgroundCalls;
        this.tick = tick;
    }

    /** Ends any lease by id, whichever JVM holds it: the holder sees its permit lost. */
    boolean forceRelease(String permitId) {
        Released reply = context.runner().call(identity.keys(), ReleaseScript.byForce(identity.limit(), permitId));
        figures.takeIn(reply.usage());
        return reply.released();
    }

    /**
     * Releases the lease in one {@code release} call that tells its former owner of a hand-over
     * (as {@link #adopt} does), not of a lost lease, which {@link #forceRelease} is. One call, so a
     * failure leaves nothing half done: the lease is released or still its owner's. Only a lease
     * this JVM held, which it has stopped renewing here, is sent again in the background until
     * Redis answers or the lease ends, as {@link Permit#release()} does; the caller hears of the
     * failure all the same.
     */
    boolean release(String permitId) {
        context.checkOpen();
        Lease held = ledger.lease(permitId);
        Lease mine = held != null && held.release() ? held : null;
        if (mine != null) {
            ledger.ended(mine);
        }
        Released reply;
        try {
            reply = context.runner().call(identity.keys(), ReleaseScript.handingOver(identity.limit(), permitId,
                    identity.inbox()));
        } catch (SemaphoreUnavailableException e) {
            if (mine != null) {
                log.warn("Could not release {} of semaphore '{}' ({}); retrying until Redis answers or the lease"
                        + " ends, within {}", Ids.shown(permitId), identity.name(), e.getMessage(),
                        Duration.ofNanos(mine.leaseNanos()));
                backgroundCalls.release(mine);
            }
            throw e;
        }
        figures.takeIn(reply.usage());
        return reply.released();
    }

    /** Takes over lease {@code permitId} from whichever JVM holds it; renews it if this JVM does. */
    Optional<Permit> adopt(String permitId) {
        context.checkOpen();
        long sentNanos = System.nanoTime();
        Leased reply = context.runner().call(identity.keys(), LeaseScript.adopt(identity.limit(), permitId,
                identity.inbox(), Ids.owner()));
        figures.takeIn(reply.usage());
        if (reply.status() != Leased.Status.HELD) {
            return Optional.empty();
        }
        Lease adopted = new DefaultPermit(this, identity.name(), permitId, reply.count(), reply.token(), reply.lease(),
                sentNanos + reply.lease().toNanos(), reply.usage().serverMicros(), true).lease();
        Lease existing = ledger.holdIfAbsent(adopted);
        if (existing != null) {
            // This JVM holds it already: the adoption renewed it.
            existing.confirmed(reply.usage().serverMicros(), sentNanos, reply.lease());
            return Optional.of(existing.handle());
        }
        ledger.nowHeld(adopted, context.observations().current());
        tick.wake();
        return Optional.of(adopted.handle());
    }

    static void checkPermitId(String permitId) {
        if (permitId == null || permitId.isEmpty() || permitId.length() > 200
                || permitId.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
            throw new IllegalArgumentException("permitId must be a permit's id(): 1..200 characters without whitespace"
                    + " or control characters");
        }
    }

    /** The holder, which still held the lease, makes it end {@code leaseTime} from now. */
    @Override
    public void extend(Lease lease, Duration leaseTime) {
        long sentNanos = System.nanoTime();
        // From the send on, a shorter lease may be set already (see LeaseKeeper#renew).
        lease.mayHaveSet(sentNanos, leaseTime);
        Leased reply;
        try {
            reply = context.runner().call(identity.keys(), LeaseScript.extend(identity.limit(), lease.id(), leaseTime,
                    identity.inbox()));
        } catch (SemaphoreUnavailableException e) {
            tick.wake();
            // A shorter lease may have been set: its end needs a watchdog of its own, as the
            // renewal in flight (if any) was timed for the old one.
            watchdog.watch(List.of(lease));
            throw e;
        }
        figures.takeIn(reply.usage());
        switch (reply.status()) {
            case HELD -> {
                lease.confirmed(reply.usage().serverMicros(), sentNanos, reply.lease());
                // A shorter lease needs an earlier tick, and a watchdog of its own in case the
                // renewal in flight (timed for the old lease) never comes back.
                tick.wake();
                watchdog.watch(List.of(lease));
            }
            case OWNED_ELSEWHERE -> {
                ledger.handOver(lease);
                throw lease.notHeld();
            }
            case GONE -> {
                ledger.lose(lease, GONE);
                throw lease.notHeld();
            }
        }
    }

    /**
     * The holder gave back part of the lease, whose count has gone down to {@code keep} already.
     * Like a release, it waits for Redis only briefly, and only while Redis answers; past that it
     * goes on in the background, and is sent again if Redis does not answer.
     */
    @Override
    public void releasePart(Lease lease, int keep) {
        boolean answering = context.runner().answering();
        CompletableFuture<Released> reply = context.runner().send(identity.keys(), ReleaseScript.own(identity.limit(),
                lease.id(), keep, identity.inbox()));
        if (answeredBriefly(reply, answering)) {
            partReleased(lease, reply.join(), true);
            return;
        }
        ledger.recount(lease);
        context.listeners().releaseDeferred(identity.name());
        reply.whenCompleteAsync((released, error) -> {
            if (error == null) {
                partReleased(lease, released, false);
            } else {
                log.warn("Could not give back part of {} of semaphore '{}' ({}); retrying until Redis answers or the"
                        + " lease ends", Ids.shown(lease.id()), identity.name(),
                        ScriptRunner.failure(error).getMessage());
                backgroundCalls.releasePart(lease, keep);
            }
        }, context.callbacks());
    }

    /**
     * What Redis said of a part given back: the listeners hear of the new count, or the lease was
     * no longer this JVM's.
     *
     * @param toCaller whether the holder still waits for it: then a lease no longer held is its
     *                 {@link IllegalStateException}, and the count is told now (a deferred part
     *                 told it when the holder returned)
     */
    private void partReleased(Lease lease, Released reply, boolean toCaller) {
        figures.takeIn(reply.usage());
        if (reply.released()) {
            if (toCaller) {
                ledger.recount(lease);
            }
            return;
        }
        if (reply.ownedElsewhere()) {
            ledger.handOver(lease);
        } else {
            ledger.lose(lease, GONE);
        }
        if (toCaller) {
            throw lease.notHeld();
        }
    }

    /**
     * The holder releases the lease: only the one call that ends it ({@link Lease#release()})
     * sends the release. While Redis answers, the holder waits for the reply, at most
     * {@link #RELEASE_WAIT}, so the permit is free when release() returns; when Redis is known not
     * to answer (the connection is down, or a call went unanswered since the last reply) it does
     * not wait at all. Either way the release is on the library's one connection, ahead of any
     * call made after it. One not confirmed by then goes on in the background, and is sent again
     * until Redis answers or the lease would have ended anyway. Only a lease this JVM still owns is
     * released: one another JVM adopted is left to it.
     */
    @Override
    public void release(Lease lease) {
        if (!lease.release()) {
            return;
        }
        ledger.ended(lease);
        boolean answering = context.runner().answering();
        CompletableFuture<Released> reply = context.runner().send(identity.keys(), ReleaseScript.own(identity.limit(),
                lease.id(), 0, identity.inbox()));
        if (answeredBriefly(reply, answering)) {
            figures.takeIn(reply.join().usage());
            return;
        }
        context.listeners().releaseDeferred(identity.name());
        reply.whenCompleteAsync((released, error) -> {
            if (error == null) {
                figures.takeIn(released.usage());
            } else {
                log.warn("Could not release {} of semaphore '{}' ({}); retrying until Redis answers or the lease ends,"
                        + " within {}", Ids.shown(lease.id()), identity.name(),
                        ScriptRunner.failure(error).getMessage(), Duration.ofNanos(lease.leaseNanos()));
                backgroundCalls.release(lease);
            }
        }, context.callbacks());
    }

    /**
     * Waits for {@code reply} on the holder's thread, at most {@link #RELEASE_WAIT}, only if Redis
     * was {@code answering} when it was sent, and only for as long as it still is (a connection
     * that closes under the call, as when Redis is killed, ends the wait at once); never on an
     * interrupted thread.
     *
     * @return whether Redis replied by then
     */
    private boolean answeredBriefly(CompletableFuture<?> reply, boolean answering) {
        long until = System.nanoTime() + RELEASE_WAIT.toNanos();
        boolean wait = answering;
        while (wait && !reply.isDone() && !Thread.currentThread().isInterrupted()) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                reply.get(Math.min(left, ANSWERING_CHECK.toNanos()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // told by the state of the future below
            }
            wait = context.runner().answering();
        }
        return reply.isDone() && !reply.isCompletedExceptionally();
    }
}
