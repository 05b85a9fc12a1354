package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.RenewScript;
import io.github.redissemaphore.core.internal.redis.RenewScript.Renewed;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps the leases of one semaphore in this JVM: the tick's one renew call for every lease and
 * every waiter, the confirmation of claims (grants heard from the inbox), and the watchdog that
 * gives a lease up before it ends as this JVM measures it when no renewal has come back. Here the
 * JVM learns that a lease was lost, or adopted by another JVM.
 */
final class LeaseKeeper extends SemaphorePart {

    /** No such moment: a System.nanoTime() that never occurs in practice. */
    static final long NONE = Long.MIN_VALUE;

    /** A renewal failed and no renewal has succeeded since: logged once per stretch. */
    private volatile boolean renewalFailing;
    /** System.nanoTime() at which the oldest renewal that failed, not followed by a success, was sent; or NONE. */
    private final AtomicLong renewalFailingSince = new AtomicLong(NONE);
    /** System.nanoTime() at which the tick's renewal now in flight was sent; NONE when none is. */
    private final AtomicLong renewalInFlight = new AtomicLong(NONE);
    /** A confirmation of claims is scheduled and has not started yet. */
    private final AtomicBoolean confirming = new AtomicBoolean();

    LeaseKeeper(DefaultRedisSemaphore semaphore) {
        super(semaphore);
    }

    /**
     * @param now System.nanoTime() of the caller
     * @return System.nanoTime() at which the renewals began to fail, or NONE while they do not
     */
    long failingSince(long now) {
        long since = renewalFailingSince.get();
        long inFlight = renewalInFlight.get();
        Duration due = tickDelay();
        if (since == NONE && inFlight != NONE && due != null && now - inFlight > due.toNanos()) {
            // Unanswered when the next renewal is due: Redis is slow or paused; that counts as failing.
            since = inFlight;
        }
        return since;
    }

    /** @return when the next tick is due, or null when nothing needs one */
    Duration tickDelay() {
        Duration delay = null;
        if (settings.autoRenew()) {
            // A third of the shortest lease: one renew call covers them all.
            OptionalLong shortest = held.values().stream().mapToLong(DefaultPermit::leaseNanos).min();
            if (shortest.isPresent()) {
                delay = Duration.ofNanos(shortest.getAsLong() / 3);
            }
        }
        boolean claims = !settings.autoRenew() && held.values().stream().anyMatch(DefaultPermit::needsConfirmation);
        if ((claims || !waiting.isEmpty()) && (delay == null || registry.waiterTick().compareTo(delay) < 0)) {
            delay = registry.waiterTick();
        }
        return delay;
    }

    /** Confirms claims (grants heard from the inbox) with one renew call, soon, off the inbox thread. */
    void confirmSoon() {
        if (confirming.compareAndSet(false, true)) {
            registry.scheduler().schedule(this::confirmNow, Instant.now());
        }
    }

    private void confirmNow() {
        confirming.set(false);
        List<DefaultPermit> claims = held.values().stream().filter(DefaultPermit::needsConfirmation).toList();
        if (!claims.isEmpty()) {
            renew(claims, List.of(), false);
        }
    }

    /**
     * One tick: a single renew call for every lease (or, without auto-renewal, every claim still
     * to confirm) and every waiter this JVM has on this semaphore.
     */
    void renewNow() {
        List<DefaultPermit> leases = held.values().stream()
                .filter(permit -> settings.autoRenew() || permit.needsConfirmation()).toList();
        List<PendingAcquisition> waiters = waiting.values().stream().filter(PendingAcquisition::isQueued).toList();
        if (leases.isEmpty() && waiters.isEmpty()) {
            return;
        }
        if (!renewalInFlight.compareAndSet(NONE, System.nanoTime())) {
            // The last renewal has not come back yet (Redis slow or down): no second one on top.
            // Its watchdog covers the leases it was sent for; one for the leases as they are now
            // covers those taken since (a grant, an adoption) too.
            watchLeases(leases);
            return;
        }
        renew(leases, waiters, true);
    }

    /**
     * Renews these leases and heartbeats these waiters in one call. Replies are read against what
     * each id was when the call was sent (a lease, or a confirmed queue entry), never against what
     * the maps hold by the time the reply arrives.
     */
    private void renew(List<DefaultPermit> leases, List<PendingAcquisition> waiters, boolean tick) {
        List<String> ids = new ArrayList<>(leases.size() + waiters.size());
        leases.forEach(permit -> ids.add(permit.id()));
        waiters.forEach(pending -> ids.add(pending.id));
        long sentNanos = tick ? renewalInFlight.get() : System.nanoTime();
        watchLeases(leases);
        commands.send(keys, new RenewScript(settings.permits(), registry.waiterHeartbeat(), inboxChannel, ids))
                .whenCompleteAsync((reply, error) -> {
                    if (tick) {
                        renewalInFlight.set(NONE);
                    }
                    if (error != null) {
                        renewalFailed(leases, error, sentNanos);
                    } else {
                        if (tick) {
                            renewalFailingSince.set(NONE);
                        }
                        renewed(leases, waiters, reply, sentNanos);
                    }
                }, registry.callbacks());
    }

    /**
     * Reports a lease lost before it ends as this JVM measures it (the send time of the last
     * renewal Redis confirmed, plus the lease), if no renewal has come back by then: one timer per
     * renewal sent (and per tick skipped while one is out, and per extension), at the earliest end
     * among its leases less a margin, run on the scheduler that no Redis call ever blocks.
     */
    void watchLeases(List<DefaultPermit> leases) {
        long earliest = leases.stream().mapToLong(permit -> permit.leaseEndsNanos() - lossMarginNanos(permit)).min()
                .orElse(Long.MAX_VALUE);
        if (earliest == Long.MAX_VALUE) {
            return;
        }
        try {
            registry.scheduler().schedule(() -> leases.stream().filter(this::aboutToEnd)
                            .forEach(permit -> lostLocally(permit, "its lease was about to run out and no renewal had"
                                    + " come back from Redis")),
                    Instant.now().plusNanos(Math.max(earliest - System.nanoTime(), 0)));
        } catch (RejectedExecutionException e) {
            // shutting down
        }
    }

    /**
     * How long before a lease's local end the watchdog gives it up: a holder must hear of the
     * loss before another party can have the permit, even when the timer runs a little late on a
     * busy machine. A tenth of its lease, at most 500 ms.
     */
    private static long lossMarginNanos(DefaultPermit permit) {
        return Math.min(permit.leaseNanos() / 10, Duration.ofMillis(500).toNanos());
    }

    /** @return whether the lease ends within the loss margin, as this JVM measures it */
    private boolean aboutToEnd(DefaultPermit permit) {
        return permit.leaseEndsNanos() - lossMarginNanos(permit) - System.nanoTime() <= 0;
    }

    /**
     * A lease given up by this JVM while Redis may still hold it (a renewal that comes back late
     * could even have extended it): it is released in the background, so it never blocks a permit
     * for longer than it has to.
     */
    private void lostLocally(DefaultPermit permit, String why) {
        if (permit.lost(why, false)) {
            semaphore.ended(permit);
            registry.listeners().leaseLost(permit);
            semaphore.moves.releaseInBackground(permit);
        }
    }

    private void renewalFailed(List<DefaultPermit> leases, Throwable error, long sentNanos) {
        renewalFailingSince.compareAndSet(NONE, sentNanos);
        if (!renewalFailing) {
            log.warn("Renewing semaphore '{}' failed, retrying every tick: {}", name(),
                    ScriptRunner.failure(error).getMessage());
            renewalFailing = true;
        }
        leases.stream().filter(this::aboutToEnd)
                .forEach(permit -> lostLocally(permit, "its lease was about to run out and Redis could not be reached"));
    }

    private void renewed(List<DefaultPermit> leases, List<PendingAcquisition> waiters, Renewed reply, long sentNanos) {
        renewalFailing = false;
        seen(reply.usage());
        if (reply.renewed() > 0) {
            registry.listeners().leasesRenewed(name(), reply.renewed());
        }
        for (int i = 0; i < leases.size(); i++) {
            long status = reply.statuses().get(i);
            if (status > 0) {
                leases.get(i).confirmed(reply.usage().serverMicros(), sentNanos, reply.leases().get(i));
            } else if (status == Renewed.ADOPTED) {
                adoptedElsewhere(leases.get(i));
            } else {
                lost(leases.get(i), "Redis no longer has it (expired, released by force, or wiped)");
            }
        }
        for (int i = 0; i < waiters.size(); i++) {
            long status = reply.statuses().get(leases.size() + i);
            PendingAcquisition pending = waiters.get(i);
            if (status > 0) {
                semaphore.acquisitions.granted(pending.id, status, sentNanos, reply.usage().serverMicros());
            } else if (status == Renewed.GONE && pending.hasTimeLeft() && pending.requeue()) {
                // Redis lost the entry (a restart without data, a failover, eviction) while this
                // caller still waits: it joins again, at the back.
                log.debug("The wait {} for semaphore '{}' was no longer in Redis; it joins the queue again at"
                        + " the back", pending.id, name());
                semaphore.acquisitions.send(pending, true, false);
            }
        }
    }

    void lost(DefaultPermit permit, String why) {
        if (permit.lost(why, false)) {
            semaphore.ended(permit);
            registry.listeners().leaseLost(permit);
        }
    }

    /**
     * The inbox heard that another JVM adopted lease {@code permitId} at server time
     * {@code adoptedMicros}: unless this JVM has had it confirmed since (it took it back).
     */
    void adoptedElsewhere(String permitId, long adoptedMicros) {
        DefaultPermit permit = held.get(permitId);
        if (permit != null && permit.confirmedBefore(adoptedMicros)) {
            adoptedElsewhere(permit);
        }
    }

    /**
     * Another JVM adopted the lease: a hand-over, not a failure. Its listeners hear of it as of a
     * loss (the permit is no longer this JVM's to use), but it is not counted as a lost lease.
     */
    void adoptedElsewhere(DefaultPermit permit) {
        if (permit.lost("another process adopted it", true)) {
            semaphore.ended(permit);
        }
    }
}
