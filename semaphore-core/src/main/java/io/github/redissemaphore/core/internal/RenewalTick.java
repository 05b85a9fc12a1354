package io.github.redissemaphore.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * The one periodic task of one semaphore in this JVM. It runs only while the JVM holds renewable
 * permits (every leaseTime/3) or has waiters (every waiter tick, and when the earliest lease ends)
 * on the semaphore, and stops by itself when neither is left, so an idle semaphore costs nothing.
 * Other pieces only ask it to come sooner ({@link #wake}, {@link #wakeWithin}); what it runs, on
 * the scheduler's thread, is the {@link Renewals} it drives.
 */
final class RenewalTick {

    /** What the tick runs. */
    interface Renewals {

        /** One tick: renew every lease and heartbeat every waiter, in one call. */
        void renewNow();

        /** @return whether a tick is due even with nothing held or waiting: a sweep (see renew.lua) */
        default boolean sweepDue() {
            return false;
        }
    }

    private final SemaphoreIdentity identity;
    private final SemaphoreLedger ledger;
    private final TaskScheduler scheduler;
    private final Duration waiterTick;
    /** How soon a claim heard from the inbox is confirmed: the waiter tick, or a quarter of the heartbeat if sooner. */
    private final Duration claimTick;
    /** Set once, by {@link #drive}, before the semaphore is handed out. */
    private volatile Renewals renewals = new Renewals() {
        @Override
        public void renewNow() {
        }
    };
    /** Guards {@link #next} and {@link #stopped}; a lock, as every lock of the library (virtual threads). */
    private final ReentrantLock lock = new ReentrantLock();
    private @Nullable ScheduledFuture<?> next;
    private boolean stopped;

    RenewalTick(SemaphoreIdentity identity, SemaphoreLedger ledger, TaskScheduler scheduler, Duration waiterTick,
                Duration waiterHeartbeat) {
        this.identity = identity;
        this.ledger = ledger;
        this.scheduler = scheduler;
        this.waiterTick = waiterTick;
        Duration quarter = waiterHeartbeat.dividedBy(4);
        this.claimTick = quarter.compareTo(waiterTick) < 0 ? quarter : waiterTick;
    }

    /** @param renewals what every tick runs (the tick is made before the piece it drives) */
    void drive(Renewals renewals) {
        this.renewals = renewals;
    }

    /** @return when the next tick is due, or null when nothing needs one */
    @Nullable Duration delay() {
        Duration delay = null;
        if (identity.settings().autoRenew()) {
            // A third of the shortest lease: one renew call covers them all.
            OptionalLong shortest = ledger.shortestLease();
            if (shortest.isPresent()) {
                delay = Duration.ofNanos(shortest.getAsLong() / 3);
            }
        }
        if ((ledger.hasWaiters() || renewals.sweepDue()) && (delay == null || waiterTick.compareTo(delay) < 0)) {
            delay = waiterTick;
        }
        // A claim (a grant from the queue, heard from the inbox) is confirmed by the next tick, in
        // one call for every claim heard meanwhile instead of one call per hand-off (a permit given
        // back before it needs none): within a waiter tick, and within a quarter of the claim, which
        // this JVM counts as half the waiter heartbeat.
        if (ledger.leases().stream().anyMatch(Lease::needsConfirmation)
                && (delay == null || claimTick.compareTo(delay) < 0)) {
            delay = claimTick;
        }
        return delay;
    }

    /** Something to renew or heartbeat appeared: make sure a tick comes in time for it. */
    void wake() {
        wakeWithin(delay());
    }

    /** Makes sure the next tick comes within {@code delay} (null: no tick needed). */
    void wakeWithin(@Nullable Duration delay) {
        lock.lock();
        try {
            if (stopped || delay == null) {
                return;
            }
            if (next != null && next.getDelay(TimeUnit.NANOSECONDS) <= delay.toNanos()) {
                return;
            }
            if (next != null) {
                next.cancel(false);
            }
            next = scheduler.schedule(this::run, Instant.now().plus(delay));
        } finally {
            lock.unlock();
        }
    }

    void stop() {
        lock.lock();
        try {
            stopped = true;
            if (next != null) {
                next.cancel(false);
                next = null;
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        lock.lock();
        try {
            next = null;
        } finally {
            lock.unlock();
        }
        try {
            renewals.renewNow();
        } finally {
            wake();
        }
    }
}
