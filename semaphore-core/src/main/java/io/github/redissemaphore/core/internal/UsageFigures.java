package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * Takes in the usage figures every script reply carries, for one semaphore: passes the newest on
 * to the listeners (gauges), to the limit-mismatch tracker, and, when this JVM has waiters, asks
 * the tick to call Redis again the moment the earliest lease ends, so a lease that ends without a
 * release is handed on at its deadline, not at the next tick.
 */
final class UsageFigures {

    private final String name;
    private final SemaphoreLedger ledger;
    private final RenewalTick tick;
    private final LimitMismatch limitMismatch;
    private final Listeners listeners;
    private final NewestUsage newestUsage = new NewestUsage();
    /** The server time (us) of the newest reply seen; 0 before the first. */
    private final java.util.concurrent.atomic.AtomicLong newestMicros = new java.util.concurrent.atomic.AtomicLong();
    /** Where the figures of a capped semaphore's cap go, which every reply about its key carries too. */
    private final Consumer<Usage> capFigures;

    UsageFigures(String name, SemaphoreLedger ledger, RenewalTick tick, LimitMismatch limitMismatch,
                 Listeners listeners, Consumer<Usage> capFigures) {
        this.capFigures = capFigures;
        this.name = name;
        this.ledger = ledger;
        this.tick = tick;
        this.limitMismatch = limitMismatch;
        this.listeners = listeners;
    }

    void seen(Usage usage) {
        newestMicros.accumulateAndGet(usage.serverMicros(), Math::max);
        // A late reply of a clean-up after the registry forgot this semaphore (and its gauges): not reported.
        if (!ledger.isRetired()) {
            newestUsage.offer(usage, figures -> listeners.usageReported(name, figures.limit(), figures.used(),
                    figures.waiters()));
        }
        limitMismatch.seen(usage);
        capFigures.accept(usage);
        if (usage.earliestLeaseEndMillis() >= 0 && usage.waiters() > 0 && ledger.hasWaiters()) {
            tick.wakeWithin(Duration.ofMillis(usage.earliestLeaseEndMillis() + 1));
        }
    }

    /**
     * @return the server time in microseconds of the newest reply about this semaphore seen so
     *         far (0 before the first): every call sent from now on runs at a later server time
     */
    long newestMicros() {
        return newestMicros.get();
    }

    /** @see LimitMismatch#others() */
    java.util.SortedMap<Integer, java.time.Instant> otherConfiguredLimits() {
        return limitMismatch.others();
    }
}
