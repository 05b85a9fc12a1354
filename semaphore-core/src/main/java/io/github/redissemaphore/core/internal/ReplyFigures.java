package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.ReportedUsage;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The figures every script reply carries (limit, used, waiters, server time, the earliest lease
 * end), for one semaphore: takes them in, keeps the newest for
 * {@link io.github.redissemaphore.core.LocalState#reportedUsage()} (which the gauges read), passes
 * them on to the listeners and to the limit-mismatch tracker, and, when this JVM has waiters, asks
 * the tick to call Redis again the moment the earliest lease ends, so a lease that ends without a
 * release is handed on at its deadline, not at the next tick.
 *
 * <p>With it, in this file, what the figures feed across a registry: the newest of concurrent
 * replies ({@link NewestUsage}), the limits other JVMs are configured with ({@link LimitMismatch},
 * warned about once per registry by {@link LimitMismatches}), and the figures of the caps of capped
 * semaphores ({@link CapFigures}).
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
    /** The figures last passed on, for {@link #reportedUsage()}: null before the first. */
    private volatile @Nullable ReportedUsage reported;

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
            newestUsage.offer(usage, figures -> {
                // kept before the listeners hear of it, so a gauge they make at once reads it
                reported = new ReportedUsage(figures.limit(), figures.used(), figures.waiters());
                listeners.usageReported(name, figures.limit(), figures.used(), figures.waiters());
            });
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

    /** @return the newest figures passed on to the listeners; null before the first reply */
    @Nullable ReportedUsage reportedUsage() {
        return reported;
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

    /**
     * Notices that other JVMs are configured with other permits for one semaphore (a rolling deploy
     * that changes {@code permits}, a forgotten instance): each script reply carries the configured
     * limit of the call before it. Without a runtime limit set in Redis every JVM grants up to its own
     * limit, so the fleet's limit is not what either side believes. This is logged once per base name
     * and other value in the registry ({@link LimitMismatches}), not once per call, per key or per
     * re-created semaphore, and kept for the endpoint until it has not been seen for a while.
     */
    static final class LimitMismatch {

        /** What the trackers of one registry share: the warnings given, and the clock. */
        interface Warnings {

            /** @return true the first time it is asked for this base name and other value: only then is a WARN logged */
            boolean firstWarning(String baseName, int other);

            long nanoTime();
        }

        private static final Logger log = EngineLogs.SEMAPHORE;

        private final String name;
        private final String baseName;
        private final int configured;
        private final boolean cap;
        private final long forgetAfterNanos;
        private final Warnings registry;
        /** Other configured limits seen -> when last seen. */
        private final Map<Integer, Seen> others = new ConcurrentHashMap<>();
        /** This JVM's rate, as the scripts tell it ("<rate-limit>/<rate-period ms>", "-": none). */
        private final String rate;
        /** Other rates warned about, once each per semaphore. */
        private final Set<String> otherRates = ConcurrentHashMap.newKeySet();

        LimitMismatch(String name, String baseName, int configured, Duration forgetAfter, Warnings registry) {
            this(name, baseName, configured, forgetAfter, registry, false);
        }

        /** @param cap whether {@code configured} is the cap of a capped semaphore (its total permits) */
        LimitMismatch(String name, String baseName, int configured, Duration forgetAfter, Warnings registry, boolean cap) {
            this(name, baseName, configured, forgetAfter, registry, cap, "-");
        }

        /** @param rate this JVM's rate of the semaphore, "<rate-limit>/<rate-period ms>", or "-" for none */
        LimitMismatch(String name, String baseName, int configured, Duration forgetAfter, Warnings registry, boolean cap,
                      String rate) {
            this.rate = rate;
            this.cap = cap;
            this.name = name;
            this.baseName = baseName;
            this.configured = configured;
            this.forgetAfterNanos = forgetAfter.toNanos();
            this.registry = registry;
        }

        /** Takes in a reply's figures. A runtime limit in Redis makes every JVM use it: no mismatch then. */
        void seen(Usage usage) {
            seen(usage.previousConfiguredLimit(), usage.overridden());
            String other = usage.otherRate();
            if (other != null && !other.equals(rate) && otherRates.add(other)) {
                // Each JVM grants up to its own rate: the fleet's is what neither side believes.
                log.warn("Semaphore '{}' is configured with {} in this JVM but with {} in another one: each JVM grants"
                        + " up to its own rate until they agree. Configure the same rate-limit and rate-period"
                        + " everywhere, or set a runtime rate that every JVM with a rate follows"
                        + " (RedisSemaphore.overrideRateLimit, or POST /actuator/semaphores/{} with"
                        + " {\"rateLimit\": N, \"ratePeriod\": \"1m\"})", name, describe(rate), describe(other), name);
            }
        }

        private static String describe(String rate) {
            String[] parts = rate.split("/");
            return parts.length == 2 ? "rate-limit " + parts[0] + " per " + parts[1] + " ms" : "no rate limit";
        }

        /**
         * Takes in the configured limit of the call before a reply ({@code other}; 0: none known) and
         * whether a runtime limit is set, which every JVM follows.
         */
        void seen(int other, boolean overridden) {
            long now = registry.nanoTime();
            forgetOld(now);
            if (overridden || other <= 0 || other == configured) {
                return;
            }
            others.put(other, new Seen(Instant.now(), now));
            if (cap && registry.firstWarning(baseName + " total", other)) {
                log.warn("Semaphore '{}' is configured with total permits {} (its cap over all keys) in this JVM but with"
                        + " {} in another one: each JVM grants up to its own cap until they agree. Configure the same"
                        + " total-permits everywhere, or set a runtime cap that every JVM follows"
                        + " (SemaphoreCap.overrideLimit, or POST /actuator/semaphores/{} with {\"totalLimit\": N})",
                        baseName, configured, other, baseName);
            } else if (!cap && registry.firstWarning(baseName, other)) {
                String family = name.equals(baseName) ? "" : " (said once for every semaphore '" + baseName + ":<key>')";
                log.warn("Semaphore '{}' is configured with {} permits in this JVM but with {} in another one{}: each JVM"
                        + " grants up to its own limit until they agree. Configure the same permits everywhere, or set a"
                        + " runtime limit that every JVM follows (RedisSemaphore.overrideLimit, or POST"
                        + " /actuator/semaphores/{} with {\"limit\": N})", name, configured, other, family, name);
            }
        }

        /** @return the other configured limits seen lately, each with when it was last seen */
        SortedMap<Integer, Instant> others() {
            forgetOld(registry.nanoTime());
            SortedMap<Integer, Instant> seen = new TreeMap<>();
            others.forEach((limit, when) -> seen.put(limit, when.at()));
            return seen;
        }

        private void forgetOld(long now) {
            others.values().removeIf(seen -> now - seen.nanos() > forgetAfterNanos);
        }

        /** When a reply last showed a limit: as a date for people, and on the monotonic clock for the age. */
        private record Seen(Instant at, long nanos) {
        }
    }

    /**
     * What one registry (one JVM, as a rule) has noticed of other JVMs configured with other permits,
     * across its semaphores: which mismatches it has warned about. Kept here, not per semaphore,
     * because keyed semaphores ({@code "exports:<tenant>"}) share their configuration: during a
     * rolling deploy every tenant's semaphore sees the same other value, and the registry forgets and
     * re-creates idle keyed semaphores; a WARN per semaphore instance would flood the log. One WARN
     * per base name and other value, for the life of the registry: the set is as small as the
     * configuration (names times the values ever deployed).
     */
    static final class LimitMismatches implements LimitMismatch.Warnings {

        /**
         * How long another configured limit is shown after it was last seen, at least: a finished
         * deploy's value leaves the endpoint after this. See {@link #forgetAfter}.
         */
        static final Duration MIN_FORGET_AFTER = Duration.ofMinutes(1);
        private static final int LEASES_TO_FORGET = 3;

        private final Set<String> warned = ConcurrentHashMap.newKeySet();
        private volatile LongSupplier nanoClock = System::nanoTime;

        /** @return the mismatch tracker of one semaphore, sharing this registry's warnings */
        LimitMismatch of(String name, String baseName, SemaphoreSettings settings) {
            return new LimitMismatch(name, baseName, settings.permits(), forgetAfter(settings), this, false,
                    settings.limitsRate() ? settings.rateLimit() + "/" + settings.ratePeriod().toMillis() : "-");
        }

        /** @return the mismatch tracker of the cap of the capped semaphore {@code baseName} (its total permits) */
        LimitMismatch ofCap(String baseName, SemaphoreSettings settings) {
            return new LimitMismatch(baseName, baseName, settings.totalPermits(), forgetAfter(settings), this, true);
        }

        /**
         * How long an other configured limit counts after a reply last showed it: 3 x max(lease time,
         * 1 min). A reply shows the configured limit of the call just before it, so a JVM sees another
         * one's value only when its call follows one of the other's; a JVM that holds permits calls at
         * least every third of a lease (renewal), and callers are many, so an instance still running
         * shows up many times in that window. Three leases, and never under three minutes, keeps the
         * entry through the quiet spells of a deploy that is still going on, and drops the value of
         * one that has finished a few minutes after its last instance went.
         */
        static Duration forgetAfter(SemaphoreSettings settings) {
            Duration lease = settings.leaseTime().compareTo(MIN_FORGET_AFTER) > 0 ? settings.leaseTime() : MIN_FORGET_AFTER;
            return lease.multipliedBy(LEASES_TO_FORGET);
        }

        @Override
        public boolean firstWarning(String baseName, int other) {
            return warned.add(baseName + '\u0000' + other);
        }

        @Override
        public long nanoTime() {
            return nanoClock.getAsLong();
        }

        /** For tests: a clock that can be moved on, instead of waiting minutes. */
        void nanoClock(LongSupplier clock) {
            this.nanoClock = clock;
        }
    }

    /**
     * The caps of one registry's capped semaphores: every reply about one of a cap's keys carries the
     * cap's figures too, and this passes the newest on to the listeners (gauges of the whole, named by
     * the base name) and notices other JVMs configured with another cap. Shared by all keys of a cap,
     * and kept for the life of the registry: one entry per capped base name, as few as the
     * configuration names.
     */
    static final class CapFigures {

        private final Listeners listeners;
        private final LimitMismatches mismatches;
        private final Map<String, Cap> caps = new ConcurrentHashMap<>();

        CapFigures(Listeners listeners, LimitMismatches mismatches) {
            this.listeners = listeners;
            this.mismatches = mismatches;
        }

        /** Takes in a reply's figures of the cap {@code baseName} (none when it carries no cap's). */
        void seen(String baseName, SemaphoreSettings settings, Usage usage) {
            Usage.Total total = usage.total();
            if (total == null) {
                return;
            }
            Cap cap = caps.computeIfAbsent(baseName, name -> new Cap(mismatches.ofCap(name, settings)));
            cap.newest.offer(usage, figures -> {
                Usage.Total newest = Objects.requireNonNull(figures.total(), "offered with a cap");
                // kept before the listeners hear of it, so a gauge they make at once reads it
                cap.reported = new ReportedUsage(newest.limit(), newest.used(), newest.waiters());
                listeners.totalUsageReported(baseName, newest.limit(), newest.used(), newest.waiters());
            });
            cap.mismatch.seen(total.previousConfiguredLimit(), total.override() > 0);
        }

        /** @return the other caps of {@code baseName} seen lately in other JVMs, each with when it was last seen */
        SortedMap<Integer, Instant> otherConfiguredLimits(String baseName) {
            Cap cap = caps.get(baseName);
            return cap == null ? new TreeMap<>() : cap.mismatch.others();
        }

        /** @return the newest figures of the cap {@code baseName} passed on to the listeners; null before the first */
        @Nullable ReportedUsage reportedUsage(String baseName) {
            Cap cap = caps.get(baseName);
            return cap == null ? null : cap.reported;
        }

        /** What is kept of one cap: the newest of its figures, and the other caps seen. */
        private static final class Cap {

            private final ReplyFigures.NewestUsage newest = new ReplyFigures.NewestUsage();
            private final LimitMismatch mismatch;
            /** Null before the first figures. */
            private volatile @Nullable ReportedUsage reported;

            Cap(LimitMismatch mismatch) {
                this.mismatch = mismatch;
            }
        }
    }
}
