package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.internal.redis.LeaseScript;
import io.github.redissemaphore.core.internal.redis.LeaseScript.Leased;
import io.github.redissemaphore.core.internal.redis.ReleaseScript;
import io.github.redissemaphore.core.internal.redis.ReleaseScript.Released;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.slf4j.Logger;

/**
 * Permits of one semaphore that move: released (all of a lease, part of it, by id from any JVM,
 * or by force), adopted from another JVM, or extended. Each move is one script call; where a
 * lease this JVM held is given back and Redis does not answer, the call is sent again in the
 * background until Redis answers or the lease ends.
 */
final class PermitMoves implements DefaultPermit.PermitActions {

    private static final Logger log = EngineLogs.SEMAPHORE;
    private static final String GONE = "Redis no longer has it (expired, released by force, or wiped)";

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final SemaphoreLedger ledger;
    private final UsageFigures figures;
    private final LeaseWatchdog watchdog;
    private final CleanUps cleanUps;
    private final RenewalTick tick;

    PermitMoves(SemaphoreIdentity identity, SemaphoreContext context, SemaphoreLedger ledger, UsageFigures figures,
                LeaseWatchdog watchdog, CleanUps cleanUps, RenewalTick tick) {
        this.identity = identity;
        this.context = context;
        this.ledger = ledger;
        this.figures = figures;
        this.watchdog = watchdog;
        this.cleanUps = cleanUps;
        this.tick = tick;
    }

    /** Ends any lease by id, whichever JVM holds it: the holder sees its permit lost. */
    boolean forceRelease(String permitId) {
        Released reply = context.runner().call(identity.keys(), ReleaseScript.byForce(identity.limit(), permitId));
        figures.seen(reply.usage());
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
                cleanUps.release(mine);
            }
            throw e;
        }
        figures.seen(reply.usage());
        return reply.released();
    }

    /** Takes over lease {@code permitId} from whichever JVM holds it; renews it if this JVM does. */
    Optional<Permit> adopt(String permitId) {
        context.checkOpen();
        long sentNanos = System.nanoTime();
        Leased reply = context.runner().call(identity.keys(), LeaseScript.adopt(identity.limit(), permitId,
                identity.inbox(), Ids.owner()));
        figures.seen(reply.usage());
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
        Leased reply;
        try {
            reply = context.runner().call(identity.keys(), LeaseScript.extend(identity.limit(), lease.id(), leaseTime,
                    identity.inbox()));
        } catch (SemaphoreUnavailableException e) {
            lease.mayHaveSet(sentNanos, leaseTime);
            tick.wake();
            // A shorter lease may have been set: its end needs a watchdog of its own, as the
            // renewal in flight (if any) was timed for the old one.
            watchdog.watch(List.of(lease));
            throw e;
        }
        figures.seen(reply.usage());
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
     * Like a release, it is sent again in the background if Redis does not answer.
     */
    @Override
    public void releasePart(Lease lease, int keep) {
        Released reply;
        try {
            reply = context.runner().call(identity.keys(), ReleaseScript.own(identity.limit(), lease.id(), keep,
                    identity.inbox()));
        } catch (SemaphoreUnavailableException e) {
            log.warn("Could not give back part of {} of semaphore '{}' ({}); retrying until Redis answers or the lease"
                    + " ends", Ids.shown(lease.id()), identity.name(), e.getMessage());
            cleanUps.releasePart(lease, keep);
            ledger.recount(lease);
            return;
        }
        figures.seen(reply.usage());
        if (reply.released()) {
            ledger.recount(lease);
        } else if (reply.ownedElsewhere()) {
            ledger.handOver(lease);
            throw lease.notHeld();
        } else {
            ledger.lose(lease, GONE);
            throw lease.notHeld();
        }
    }

    /**
     * The holder releases the lease: only the one call that ends it ({@link Lease#release()})
     * sends the release. The caller waits for the reply (at most the command timeout) so the
     * permit is free when release() returns; if Redis does not answer, the release is sent again
     * in the background until the lease would have ended anyway. Only a lease this JVM still owns
     * is released: one another JVM adopted is left to it.
     */
    @Override
    public void release(Lease lease) {
        if (!lease.release()) {
            return;
        }
        ledger.ended(lease);
        try {
            figures.seen(context.runner().call(identity.keys(), ReleaseScript.own(identity.limit(), lease.id(), 0,
                    identity.inbox())).usage());
        } catch (SemaphoreUnavailableException e) {
            log.warn("Could not release {} of semaphore '{}' ({}); retrying until Redis answers or the lease ends,"
                    + " within {}", Ids.shown(lease.id()), identity.name(), e.getMessage(),
                    Duration.ofNanos(lease.leaseNanos()));
            cleanUps.release(lease);
        }
    }
}
