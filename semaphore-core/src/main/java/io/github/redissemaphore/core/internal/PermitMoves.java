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
import java.util.concurrent.CompletableFuture;

/**
 * Permits of one semaphore that move: released (all of a lease, part of it, by id from any JVM,
 * or by force), adopted from another JVM, or extended. Each move is one script call; where a
 * lease this JVM held is given back and Redis does not answer, the call is sent again in the
 * background until Redis answers or the lease ends.
 */
final class PermitMoves extends SemaphorePart {

    PermitMoves(DefaultRedisSemaphore semaphore) {
        super(semaphore);
    }

    /** See {@link DefaultRedisSemaphore#forceRelease(String)}: the holder sees its permit lost. */
    boolean forceRelease(String permitId) {
        Released reply = commands.call(keys, ReleaseScript.byForce(settings.permits(), permitId));
        seen(reply.usage());
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
        registry.checkOpen();
        DefaultPermit own = held.get(permitId);
        boolean mine = own != null && own.markReleased();
        if (mine) {
            semaphore.ended(own);
        }
        Released reply;
        try {
            reply = commands.call(keys, ReleaseScript.handingOver(settings.permits(), permitId, inboxChannel));
        } catch (SemaphoreUnavailableException e) {
            if (mine) {
                log.warn("Could not release {} of semaphore '{}' ({}); retrying until Redis answers or the lease"
                        + " ends, within {}", Ids.shown(permitId), name(), e.getMessage(),
                        Duration.ofNanos(own.leaseNanos()));
                releaseInBackground(own);
            }
            throw e;
        }
        seen(reply.usage());
        return reply.released();
    }

    /** Takes over lease {@code permitId} from whichever JVM holds it; renews it if this JVM does. */
    Optional<Permit> adopt(String permitId) {
        registry.checkOpen();
        long sentNanos = System.nanoTime();
        Leased reply = commands.call(keys, LeaseScript.adopt(settings.permits(), permitId, inboxChannel, Ids.owner()));
        seen(reply.usage());
        if (reply.status() != Leased.Status.HELD) {
            return Optional.empty();
        }
        DefaultPermit adopted = new DefaultPermit(semaphore, permitId, reply.count(), reply.token(), reply.lease(),
                sentNanos + reply.lease().toNanos(), reply.usage().serverMicros(), true);
        DefaultPermit existing = held.putIfAbsent(permitId, adopted);
        if (existing != null) {
            // This JVM holds it already: the adoption renewed it.
            existing.confirmed(reply.usage().serverMicros(), sentNanos, reply.lease());
            return Optional.of(existing);
        }
        semaphore.nowHeld(adopted, registry.observations().current());
        tick.wake();
        return Optional.of(adopted);
    }

    static void checkPermitId(String permitId) {
        if (permitId == null || permitId.isEmpty() || permitId.length() > 200
                || permitId.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
            throw new IllegalArgumentException("permitId must be a permit's id(): 1..200 characters without whitespace"
                    + " or control characters");
        }
    }

    /** Called by the permit, which it still held, to make its lease end {@code leaseTime} from now. */
    void extend(DefaultPermit permit, Duration leaseTime) {
        long sentNanos = System.nanoTime();
        Leased reply;
        try {
            reply = commands.call(keys, LeaseScript.extend(settings.permits(), permit.id(), leaseTime, inboxChannel));
        } catch (SemaphoreUnavailableException e) {
            permit.mayHaveSet(sentNanos, leaseTime);
            tick.wake();
            // A shorter lease may have been set: its end needs a watchdog of its own, as the
            // renewal in flight (if any) was timed for the old one.
            semaphore.leases.watchLeases(List.of(permit));
            throw e;
        }
        seen(reply.usage());
        switch (reply.status()) {
            case HELD -> {
                permit.confirmed(reply.usage().serverMicros(), sentNanos, reply.lease());
                // A shorter lease needs an earlier tick, and a watchdog of its own in case the
                // renewal in flight (timed for the old lease) never comes back.
                tick.wake();
                semaphore.leases.watchLeases(List.of(permit));
            }
            case OWNED_ELSEWHERE -> {
                semaphore.leases.adoptedElsewhere(permit);
                throw permit.notHeld();
            }
            case GONE -> {
                semaphore.leases.lost(permit, "Redis no longer has it (expired, released by force, or wiped)");
                throw permit.notHeld();
            }
        }
    }

    /**
     * Called by the permit, whose count has gone down to {@code keep} already, to give the rest
     * back. Like a release, it is sent again in the background if Redis does not answer.
     */
    void releasedPart(DefaultPermit permit, int keep) {
        Released reply;
        try {
            reply = commands.call(keys, ReleaseScript.own(settings.permits(), permit.id(), keep, inboxChannel));
        } catch (SemaphoreUnavailableException e) {
            log.warn("Could not give back part of {} of semaphore '{}' ({}); retrying until Redis answers or the lease"
                    + " ends", Ids.shown(permit.id()), name(), e.getMessage());
            persist("give back part of " + Ids.shown(permit.id()) + " of", Duration.ofNanos(permit.leaseNanos()),
                    () -> commands.send(keys, ReleaseScript.own(settings.permits(), permit.id(), keep, inboxChannel)),
                    released -> seen(released.usage()));
            recount(permit);
            return;
        }
        seen(reply.usage());
        if (reply.released()) {
            recount(permit);
        } else if (reply.ownedElsewhere()) {
            semaphore.leases.adoptedElsewhere(permit);
            throw permit.notHeld();
        } else {
            semaphore.leases.lost(permit, "Redis no longer has it (expired, released by force, or wiped)");
            throw permit.notHeld();
        }
    }

    /**
     * Tells the listeners that a held permit's count went down. Its {@code semaphore.hold}
     * observation goes on: the lease is still held.
     */
    private void recount(DefaultPermit permit) {
        permit.locked(() -> {
            if (held.get(permit.id()) == permit) {
                registry.listeners().permitCountChanged(permit);
            }
        });
    }

    /**
     * Called by the permit, once, when its holder releases it. The caller waits for the reply (at
     * most the command timeout) so the permit is free when release() returns; if Redis does not
     * answer, the release is sent again in the background until the lease would have ended anyway.
     * Only a lease this JVM still owns is released: one another JVM adopted is left to it.
     */
    void released(DefaultPermit permit) {
        semaphore.ended(permit);
        try {
            seen(commands.call(keys, ReleaseScript.own(settings.permits(), permit.id(), 0, inboxChannel)).usage());
        } catch (SemaphoreUnavailableException e) {
            log.warn("Could not release {} of semaphore '{}' ({}); retrying until Redis answers or the lease ends,"
                    + " within {}", Ids.shown(permit.id()), name(), e.getMessage(),
                    Duration.ofNanos(permit.leaseNanos()));
            releaseInBackground(permit);
        }
    }

    CompletableFuture<Void> releaseInBackground(DefaultPermit permit) {
        return persist("release " + Ids.shown(permit.id()) + " of", Duration.ofNanos(permit.leaseNanos()),
                () -> commands.send(keys, ReleaseScript.own(settings.permits(), permit.id(), 0, inboxChannel)),
                reply -> seen(reply.usage()));
    }
}
