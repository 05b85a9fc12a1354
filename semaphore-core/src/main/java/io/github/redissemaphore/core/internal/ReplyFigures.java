package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.SortedMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The figures every script reply carries (limit, used, waiters, server time, the earliest lease
 * end), for one semaphore: takes them in and passes the newest on
 * to the listeners (gauges), to the limit-mismatch tracker, and, when this JVM has waiters, asks
 * the tick to call Redis again the moment the earliest lease ends, so a lease that ends without a
 * release is handed on at its deadline, not at the next tick.
 */
final class ReplyFigures {

    private final String name;
    private final SemaphoreLedger ledger;
    private final RenewalTick tick;
    private final LimitMismatch limitMismatch;
    private final Listeners listeners;
    private final NewestUsage newestUsage = new NewestUsage();
    /** The server time (us) of the newest reply seen; 0 before the first. */
    private final AtomicLong newestMicros = new AtomicLong();
    /** Where the figures of a capped semaphore's cap go, which every reply about its key carries too. */
    private final Consumer<Usage> capFigures;

    ReplyFigures(String name, SemaphoreLedger ledger, RenewalTick tick, LimitMismatch limitMismatch,
                 Listeners listeners, Consumer<Usage> capFigures) {
        this.capFigures = capFigures;
        this.name = name;
        this.ledger = ledger;
        this.tick = tick;
        this.limitMismatch = limitMismatch;
        this.listeners = listeners;
    }

    /** Takes in the figures of one reply about this semaphore, on the thread that handles the reply. */
    void takeIn(Usage usage) {
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
    SortedMap<Integer, Instant> otherConfiguredLimits() {
        return limitMismatch.others();
    }

    /**
     * Passes on the newest usage figures of one semaphore, without a lock on the reply path. Replies
     * of concurrent calls arrive in any order, and a gauge must not end on an older figure than it
     * has already shown: every reply offers its figures (the newest by Redis server time wins), and
     * whichever thread finds nobody publishing passes on the newest, again until nothing newer came
     * meanwhile. No thread ever waits for another.
     */
    static final class NewestUsage {

        private final AtomicReference<Usage> newest = new AtomicReference<>();
        private final AtomicBoolean publishing = new AtomicBoolean();
        /** Server time of the figures last passed on; written only by the publishing thread. */
        private volatile long publishedMicros = Long.MIN_VALUE;

        void offer(Usage usage, Consumer<Usage> sink) {
            newest.accumulateAndGet(usage, (current, offered) ->
                    current == null || offered.serverMicros() > current.serverMicros() ? offered : current);
            // A thread that finds another publishing leaves: that one looks again after it is done, and
            // so sees what was offered meanwhile.
            while (Objects.requireNonNull(newest.get(), "offered above").serverMicros() > publishedMicros) {
                if (!publishing.compareAndSet(false, true)) {
                    return;
                }
                try {
                    Usage figures = Objects.requireNonNull(newest.get(), "offered above");
                    if (figures.serverMicros() > publishedMicros) {
                        publishedMicros = figures.serverMicros();
                        sink.accept(figures);
                    }
                } finally {
                    publishing.set(false);
                }
            }
        }
    }
}
