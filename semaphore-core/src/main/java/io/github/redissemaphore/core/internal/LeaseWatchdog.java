package io.github.redissemaphore.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import org.springframework.scheduling.TaskScheduler;

/**
 * Gives a lease up before it ends as this JVM measures it (the send time of the last renewal Redis
 * confirmed, plus the lease) when no renewal has come back by then, so a holder hears of the loss
 * before another party can have the permit. A lease given up here may still be held in Redis (a
 * renewal that comes back late could even have extended it): it is released in the background.
 */
final class LeaseWatchdog {

    private final SemaphoreLedger ledger;
    private final BackgroundCalls backgroundCalls;
    private final TaskScheduler scheduler;

    LeaseWatchdog(SemaphoreLedger ledger, BackgroundCalls backgroundCalls, TaskScheduler scheduler) {
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
        leases.stream().filter(LeaseWatchdog::aboutToEnd).forEach(lease -> {
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
