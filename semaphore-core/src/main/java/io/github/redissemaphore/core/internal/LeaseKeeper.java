package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.internal.redis.RenewScript;
import io.github.redissemaphore.core.internal.redis.RenewScript.Renewed;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.springframework.scheduling.TaskScheduler;

/**
 * Keeps the leases of one semaphore in this JVM: the tick's one renew call for every lease and
 * every waiter, and the confirmation of claims (grants heard from the inbox); with its
 * {@link Watchdog}, which gives up a lease no renewal confirmed in time. Here the JVM learns
 * that a lease was lost, or adopted by another JVM, and what became of its waiters, which it
 * passes on to {@link WaiterReplies}. When the renewals run is {@link RenewalTick}'s: every owner
 * wakes the tick, so it is made before them, and the keeper, made last, is what it drives.
 */
final class LeaseKeeper implements RenewalTick.Renewals {

    /** No such moment: a System.nanoTime() that never occurs in practice. */
    static final long NONE = Long.MIN_VALUE;

    private static final Logger log = EngineLogs.SEMAPHORE;

    /** What a renewal reply says of the waiters it heartbeated. */
    interface WaiterReplies {

        /**
         * Waiter {@code id} was granted ({@code token > 0}) or can never be ({@code token == 0}),
         * as a renew reply at server time {@code confirmedMicros} said (its claim is a full lease now).
         */
        void granted(String id, long token, long heardNanos, long confirmedMicros);

        /** Redis no longer has the queue entry of this caller, which still waits: it joins again. */
        void rejoin(PendingAcquisition pending);

        /**
         * Redis has not answered the heartbeats of this waiting caller for the Redis timeout: its
         * wait ends with {@code failure} now, not at its deadline.
         */
        void unavailable(PendingAcquisition pending, SemaphoreUnavailableException failure);
    }

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final SemaphoreLedger ledger;
    private final ReplyFigures figures;
    private final Watchdog watchdog;
    private final WaiterReplies waiters;
    /** A renewal failed and no renewal has succeeded since: logged once per stretch. */
    private volatile boolean renewalFailing;
    /** System.nanoTime() at which the oldest renewal that failed, not followed by a success, was sent; or NONE. */
    private final AtomicLong renewalFailingSince = new AtomicLong(NONE);
    /** System.nanoTime() at which the tick's renewal now in flight was sent; NONE when none is. */
    private final AtomicLong renewalInFlight = new AtomicLong(NONE);
    /**
     * How many sweeps were asked for ({@link #sweepSoon}), and how many of them a renewal has done:
     * a sweep is due while they differ.
     */
    private final AtomicLong sweepsAsked = new AtomicLong();
    private final AtomicLong sweepsDone = new AtomicLong();

    LeaseKeeper(SemaphoreIdentity identity, SemaphoreContext context, SemaphoreLedger ledger, ReplyFigures figures,
                Watchdog watchdog, WaiterReplies waiters) {
        this.identity = identity;
        this.context = context;
        this.ledger = ledger;
        this.figures = figures;
        this.watchdog = watchdog;
        this.waiters = waiters;
    }

    /**
     * @param now System.nanoTime() of the caller
     * @param due when the next tick is due ({@link RenewalTick#delay()}), or null
     * @return System.nanoTime() at which the renewals began to fail, or NONE while they do not
     */
    long failingSince(long now, @Nullable Duration due) {
        long since = renewalFailingSince.get();
        long inFlight = renewalInFlight.get();
        if (since == NONE && inFlight != NONE && due != null && now - inFlight > due.toNanos()) {
            // Unanswered when the next renewal is due: Redis is slow or paused; that counts as failing.
            since = inFlight;
        }
        return since;
    }

    /**
     * The library's connection was made anew (a failover, a restart, a dropped connection): Redis
     * may be another server now, which may still hold leases this JVM gave back on the old one.
     * The next renewal, due at once, sweeps them (renew.lua, S1 and S2), even if this JVM holds
     * and waits for nothing on this semaphore now.
     */
    void sweepSoon(RenewalTick tick) {
        sweepsAsked.incrementAndGet();
        tick.wakeWithin(Duration.ZERO);
    }

    /** @return whether a sweep was asked for and no renewal has done it yet */
    @Override
    public boolean sweepDue() {
        return sweepsDone.get() < sweepsAsked.get();
    }

    /**
     * One tick: a single renew call for every lease (or, without auto-renewal, every claim still
     * to confirm) and every waiter this JVM has on this semaphore; and the sweep, when one is due.
     */
    @Override
    public void renewNow() {
        // Read before the lists (renew.lua, S2): every call started after this runs at a later server time.
        long asked = sweepsAsked.get();
        long watermark = 0;
        if (asked > sweepsDone.get()) {
            long newest = figures.newestMicros();
            if (newest == 0) {
                // Redis never answered this JVM about this semaphore: it cannot hold a lease of it.
                sweepsDone.accumulateAndGet(asked, Math::max);
            }
            // (0 while an adoption is starting: the sweep waits for the next tick.)
            watermark = Math.min(newest, ledger.startingSince());
        }
        List<Lease> all = ledger.leases();
        List<PendingAcquisition> waiting = ledger.waiters();
        List<Lease> leases = all.stream()
                .filter(lease -> identity.settings().autoRenew() || lease.needsConfirmation()).toList();
        List<PendingAcquisition> queued = waiting.stream().filter(PendingAcquisition::isQueued).toList();
        if (leases.isEmpty() && queued.isEmpty() && watermark == 0) {
            return;
        }
        if (!renewalInFlight.compareAndSet(NONE, System.nanoTime())) {
            // The last renewal has not come back yet (Redis slow or down): no second one on top.
            // Its watchdog covers the leases it was sent for; one for the leases as they are now
            // covers those taken since (a grant, an adoption) too. Claims heard since are confirmed
            // on their own: a claim is short, and cannot wait for that renewal to come back.
            watchdog.watch(leases);
            List<Lease> claims = leases.stream().filter(Lease::needsConfirmation).toList();
            if (!claims.isEmpty()) {
                renew(claims, List.of(), false, Sweep.NONE);
            }
            return;
        }
        Sweep sweep = Sweep.NONE;
        if (watermark > 0) {
            // Spared: what this JVM holds or waits with but does not name for renewal.
            List<String> spared = new ArrayList<>();
            if (leases.size() < all.size()) {
                all.stream().filter(lease -> !lease.needsConfirmation()).forEach(lease -> spared.add(lease.id()));
            }
            waiting.stream().filter(pending -> !pending.isQueued()).forEach(pending -> spared.add(pending.id));
            sweep = new Sweep(watermark, spared, asked);
        }
        renew(leases, queued, true, sweep);
    }

    /**
     * A sweep a renewal carries: the watermark and the spared ids (renew.lua, S1 and S2), and the
     * count of sweeps asked for that it answers.
     */
    private record Sweep(long watermark, List<String> spared, long asked) {
        static final Sweep NONE = new Sweep(0, List.of(), 0);
    }

    /**
     * Renews these leases and heartbeats these waiters in one call. Replies are read against what
     * each id was when the call was sent (a lease, or a confirmed queue entry), never against what
     * the ledger holds by the time the reply arrives.
     */
    private void renew(List<Lease> leases, List<PendingAcquisition> queued, boolean tick, Sweep sweep) {
        List<String> ids = new ArrayList<>(leases.size() + queued.size());
        leases.forEach(lease -> ids.add(lease.id()));
        queued.forEach(pending -> ids.add(pending.id));
        long sentNanos = tick ? renewalInFlight.get() : System.nanoTime();
        // Redis may run this call long before its reply comes back, and it sets each lease to end
        // its own length after that: for a claim longer than its lease (a waiter heartbeat above
        // the lease time) that is sooner than the claim this JVM counts on. So from the send on,
        // each lease counts on the sooner of the two; for a held lease this changes nothing.
        leases.forEach(lease -> lease.mayHaveSet(sentNanos, Duration.ofNanos(lease.leaseNanos())));
        watchdog.watch(leases);
        CompletableFuture<Renewed> renewal = context.runner().send(identity.keys(), new RenewScript(identity.limit(),
                context.waiterHeartbeat(), identity.inbox(), ids, sweep.spared(), sweep.watermark()));
        if (!queued.isEmpty()) {
            watchHeartbeats(queued, renewal);
        }
        renewal.whenCompleteAsync((reply, error) -> {
            if (tick) {
                renewalInFlight.set(NONE);
            }
            if (error != null) {
                renewalFailed(leases, queued, error, sentNanos, tick);
            } else {
                if (tick) {
                    renewalFailingSince.set(NONE);
                }
                if (sweep.watermark() > 0) {
                    sweepsDone.accumulateAndGet(sweep.asked(), Math::max);
                    if (reply.swept() > 0) {
                        log.warn("Semaphore '{}': ended {} lease(s) of this JVM that Redis still held although this"
                                + " JVM had given them back (the server it reached anew, after a failover or a"
                                + " restart, had missed their release)", identity.name(), reply.swept());
                    }
                }
                renewed(leases, queued, reply, sentNanos);
            }
        }, context.callbacks());
    }

    /**
     * The callers whose heartbeats a renewal carries stop waiting, with
     * {@link SemaphoreUnavailableException}, once Redis has answered nothing for the Redis timeout
     * while that renewal is out: timed from the first call Redis left unanswered (this renewal, or
     * any call of this JVM made before it since Redis' last answer, such as a release), so a
     * caller hears within the timeout of the first sign of Redis going away. An answer meanwhile
     * (to any call of this JVM) keeps them waiting. Timed by the scheduler, done on the callbacks.
     */
    private void watchHeartbeats(List<PendingAcquisition> queued, CompletableFuture<Renewed> renewal) {
        ScriptRunner runner = context.runner();
        long at = Math.max(runner.unansweredSinceNanos() + runner.timeout().toNanos(), System.nanoTime());
        try {
            ScheduledFuture<?> check = context.scheduler().schedule(() -> {
                if (!renewal.isDone() || renewal.isCompletedExceptionally()) {
                    try {
                        context.callbacks().execute(() -> giveUpWaiters(queued, null));
                    } catch (RejectedExecutionException e) {
                        // shutting down: every wait ends anyway
                    }
                }
            }, Instant.now().plusNanos(at - System.nanoTime()));
            renewal.thenRun(() -> check.cancel(false));
        } catch (RejectedExecutionException e) {
            // shutting down: every wait ends anyway
        }
    }

    /**
     * Ends the waits of {@code queued} that still wait if Redis has answered nothing for the Redis
     * timeout: their heartbeats can no longer be told.
     *
     * @param failure what the last renewal failed with, or null if it is still out
     */
    private void giveUpWaiters(List<PendingAcquisition> queued, @Nullable SemaphoreException failure) {
        Duration silent = Duration.ofNanos(System.nanoTime() - context.runner().unansweredSinceNanos());
        if (queued.isEmpty() || silent.compareTo(context.runner().timeout()) < 0) {
            return;
        }
        // what the failure says (a refusal, a shutdown, no connection), else the silence
        Reason reason = Reason.of(failure);
        SemaphoreUnavailableException gone = new SemaphoreUnavailableException(identity.name(),
                reason == Reason.UNAVAILABLE ? Reason.NO_ANSWER : reason, "Redis has not"
                + " answered for " + silent.toMillis() + " ms, so the wait for semaphore '" + identity.name()
                + "' cannot go on" + (failure == null ? "" : ": " + failure.getMessage()), failure);
        queued.forEach(pending -> waiters.unavailable(pending, gone));
    }

    /**
     * A renewal failed: leases about to end are given up, and if Redis has answered nothing for
     * the Redis timeout, the callers whose heartbeats it carried stop waiting (see
     * {@link #watchHeartbeats}). A tick's renewal is sent again a waiter tick later, not a third
     * of the lease later: a renewal fails within the Redis timeout, and a Redis that answers again
     * (a pause, a short partition) must find it sent again before the lease runs out.
     */
    private void renewalFailed(List<Lease> leases, List<PendingAcquisition> queued, Throwable error,
                               long sentNanos, boolean tick) {
        renewalFailingSince.compareAndSet(NONE, sentNanos);
        SemaphoreException failure = ScriptRunner.failure(error);
        if (!renewalFailing) {
            log.warn("Renewing semaphore '{}' failed, retrying every {} ms: {}", identity.name(),
                    context.waiterTick().toMillis(), failure.getMessage());
            renewalFailing = true;
        }
        watchdog.giveUpEnding(leases, "its lease was about to run out and Redis could not be reached");
        giveUpWaiters(queued, failure);
        if (tick) {
            try {
                context.scheduler().schedule(this::renewNow, Instant.now().plus(context.waiterTick()));
            } catch (RejectedExecutionException e) {
                // shutting down
            }
        }
    }

    private void renewed(List<Lease> leases, List<PendingAcquisition> queued, Renewed reply, long sentNanos) {
        renewalFailing = false;
        figures.takeIn(reply.usage());
        if (reply.renewed() > 0) {
            context.listeners().leasesRenewed(identity.name(), reply.renewed());
        }
        for (int i = 0; i < leases.size(); i++) {
            long status = reply.statuses().get(i);
            Lease lease = leases.get(i);
            if (status > 0) {
                lease.confirmed(reply.usage().serverMicros(), sentNanos, reply.leases().get(i));
            } else if (status == Renewed.ADOPTED) {
                ledger.handOver(lease);
            } else {
                ledger.lose(lease, "Redis no longer has it (expired, released by force, or wiped)");
            }
        }
        for (int i = 0; i < queued.size(); i++) {
            long status = reply.statuses().get(leases.size() + i);
            PendingAcquisition pending = queued.get(i);
            if (status > 0) {
                waiters.granted(pending.id, status, sentNanos, reply.usage().serverMicros());
            } else if (status == Renewed.GONE && pending.hasTimeLeft() && pending.requeue()) {
                // Redis lost the entry (a restart without data, a failover, eviction) while this
                // caller still waits: it joins again, at the back.
                log.debug("The wait {} for semaphore '{}' was no longer in Redis; it joins the queue again at"
                        + " the back", pending.id, identity.name());
                waiters.rejoin(pending);
            }
        }
    }

    /**
     * The inbox heard that another JVM adopted lease {@code permitId} at server time
     * {@code adoptedMicros}: unless this JVM has had it confirmed since (it took it back).
     */
    void adoptedElsewhere(String permitId, long adoptedMicros) {
        Lease lease = ledger.lease(permitId);
        if (lease != null && lease.confirmedBefore(adoptedMicros)) {
            ledger.handOver(lease);
        }
    }

    /**
     * Gives a lease up before it ends as this JVM measures it (the send time of the last renewal Redis
     * confirmed, plus the lease) when no renewal has come back by then, so a holder hears of the loss
     * before another party can have the permit. A lease given up here may still be held in Redis (a
     * renewal that comes back late could even have extended it): it is released in the background.
     */
    static final class Watchdog {

        private final SemaphoreLedger ledger;
        private final BackgroundCalls backgroundCalls;
        private final TaskScheduler scheduler;

        Watchdog(SemaphoreLedger ledger, BackgroundCalls backgroundCalls, TaskScheduler scheduler) {
            this.ledger = ledger;
            this.backgroundCalls = backgroundCalls;
            this.scheduler = scheduler;
        }

        /**
         * One timer per renewal sent (and per tick skipped while one is out, and per extension), at the
         * earliest end among its leases less a margin, run on the scheduler that no Redis call ever blocks.
         */
        void watch(List<Lease> leases) {
            long earliest = leases.stream().mapToLong(lease -> lease.leaseEndsNanos() - lossMarginNanos(lease)).min()
                    .orElse(Long.MAX_VALUE);
            if (earliest == Long.MAX_VALUE) {
                return;
            }
            try {
                scheduler.schedule(() -> giveUpEnding(leases, "its lease was about to run out and no renewal had come"
                                + " back from Redis"),
                        Instant.now().plusNanos(Math.max(earliest - System.nanoTime(), 0)));
            } catch (RejectedExecutionException e) {
                // shutting down
            }
        }

        /** Gives up those of {@code leases} that end within their loss margin, as this JVM measures it. */
        void giveUpEnding(List<Lease> leases, String why) {
            leases.stream().filter(Watchdog::aboutToEnd).forEach(lease -> {
                if (ledger.lose(lease, why)) {
                    backgroundCalls.release(lease);
                }
            });
        }

        /**
         * How long before a lease's local end the watchdog gives it up: a holder must hear of the
         * loss before another party can have the permit, even when the timer runs a little late on a
         * busy machine. A tenth of its lease, at most 500 ms.
         */
        private static long lossMarginNanos(Lease lease) {
            return Math.min(lease.leaseNanos() / 10, Duration.ofMillis(500).toNanos());
        }

        private static boolean aboutToEnd(Lease lease) {
            return lease.leaseEndsNanos() - lossMarginNanos(lease) - System.nanoTime() <= 0;
        }
    }
}
