package io.github.redissemaphore.metrics;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.ReportedUsage;
import io.github.redissemaphore.core.SemaphoreListener;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.WhenUnavailable;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.jspecify.annotations.Nullable;

/**
 * Publishes what the semaphores of one registry do as Micrometer meters, each tagged with the
 * semaphore {@code name} (and nothing else: a key is part of the name, never a tag of its own).
 * Counters and long-task timer count the registry's {@link SemaphoreListener} events; the gauges
 * read the figures the scripts return anyway, as the registry keeps them ({@link ReportedUsage}),
 * with no copy of their own: metrics cost no Redis call.
 *
 * <ul>
 * <li>{@value #ACTIVE} long-task timer: permits this JVM holds now, and for how long;</li>
 * <li>{@value #AVAILABLE}, {@value #LIMIT}, {@value #WAITERS} gauges: the semaphore fleet-wide as
 *     last reported by Redis to this JVM (NaN until the first report);</li>
 * <li>{@value #LEASE_LOST} counter: permits found lost while held (expired, force-released);</li>
 * <li>{@value #LEASE_RENEWALS} counter: leases extended by renewal;</li>
 * <li>{@value #RELEASE_DEFERRED} counter: releases that returned before Redis confirmed them, as
 *     Redis was not answering, and went on in the background (a rise means an outage, not a leak:
 *     each lands when Redis answers again, or ends with its lease).</li>
 * <li>{@value #REJECTIONS} counter: acquisitions that got no permit, tagged {@code reason}
 *     ({@code wait-timed-out}, {@code queue-full}, {@code predicted-wait-too-long},
 *     {@code local-share-in-use}: each exists at 0 from the semaphore's first event on). A rise of
 *     {@code queue-full} means callers are turned away at once rather than left to time out; one of
 *     {@code local-share-in-use}, that this instance refused them on its own while Redis could not
 *     be reached, its share of the permits in use.</li>
 * <li>{@value #RATE_DELAYED} counter: acquisitions that joined the queue because the rate's window
 *     was full, not for want of permits (the permits let them in, or the head they queued behind):
 *     grants the rate delayed; refusals by the rate are {@value #REJECTIONS} with
 *     {@code rate-limited}.</li>
 * <li>{@value #ADMISSIONS_WITHOUT_REDIS} counter: calls admitted while Redis could not be reached,
 *     tagged {@code mode}: {@code local} (a permit of this instance's share) or {@code allow}
 *     (unguarded); both exist at 0 from the semaphore's first event on.</li>
 * <li>{@value #DEGRADED} gauge: 1 while the semaphore decides its calls without Redis (degraded
 *     mode, {@link LocalState#degraded()}), else 0, read from the registry at each read.</li>
 * <li>{@value #TOTAL_AVAILABLE}, {@value #TOTAL_LIMIT}, {@value #TOTAL_WAITERS} gauges: the cap of
 *     a capped semaphore, all its keys together, tagged with its base name only (one set per
 *     configured cap, however many keys), as last reported by Redis to this JVM.</li>
 * </ul>
 *
 * The {@value #ACQUIRE} timer is not made here: an observation meter handler makes it from the
 * {@code semaphore.acquire} observation (the starter gives the semaphore registry an observation
 * registry with such a handler when the application has none), with one set of tags wherever it
 * comes from.
 *
 * <p>Every meter of a semaphore exists from the first event of that semaphore on (the counters at
 * 0, so an alert on them has a series to read), and goes when the registry forgets the semaphore
 * ({@link #semaphoreForgotten}) while this JVM holds nothing on it.
 *
 * <p>Register it with the semaphore registry as a listener, and bind it to the meter registry
 * (Spring Boot does it for every {@link MeterBinder} bean). Events before binding are not
 * counted; the gauges show the registry's figures from their binding on.
 */
public class SemaphoreMetrics implements SemaphoreListener, MeterBinder {

    /** The acquire timer, made by an observation meter handler from the observation of that name, not here. */
    public static final String ACQUIRE = "semaphore.acquire";
    public static final String ACTIVE = "semaphore.active";
    public static final String AVAILABLE = "semaphore.permits.available";
    public static final String LIMIT = "semaphore.permits.limit";
    public static final String WAITERS = "semaphore.waiters";
    public static final String LEASE_LOST = "semaphore.lease.lost";
    public static final String LEASE_RENEWALS = "semaphore.lease.renewals";
    public static final String RELEASE_DEFERRED = "semaphore.release.deferred";
    public static final String REJECTIONS = "semaphore.rejections";
    public static final String RATE_DELAYED = "semaphore.rate.delayed";
    public static final String TOTAL_AVAILABLE = "semaphore.total.permits.available";
    public static final String TOTAL_LIMIT = "semaphore.total.permits.limit";
    public static final String TOTAL_WAITERS = "semaphore.total.waiters";
    public static final String ADMISSIONS_WITHOUT_REDIS = "semaphore.admissions.without.redis";
    public static final String DEGRADED = "semaphore.degraded";

    /** The modes that admit a call without Redis, each a {@value #ADMISSIONS_WITHOUT_REDIS} series. */
    private static final List<WhenUnavailable> ADMITTING_MODES = List.of(WhenUnavailable.LOCAL, WhenUnavailable.ALLOW);

    private static final GaugeNames OF_A_SEMAPHORE = new GaugeNames(AVAILABLE, LIMIT, WAITERS,
            "a distributed semaphore");
    private static final GaugeNames OF_A_CAP = new GaugeNames(TOTAL_AVAILABLE, TOTAL_LIMIT, TOTAL_WAITERS,
            "all keys of a capped distributed semaphore together");

    /** Where the gauges read their figures, asked for at each read. */
    private final Supplier<? extends SemaphoreRegistry> semaphoreRegistry;
    private volatile @Nullable MeterRegistry meterRegistry;
    /** The meters of each semaphore, from its first event until it is forgotten. */
    private final Map<String, SemaphoreMeters> semaphores = new ConcurrentHashMap<>();
    /** The caps reported so far, whose gauges stay for the life of the registry (one per configured cap). */
    private final Set<String> caps = ConcurrentHashMap.newKeySet();
    /** One sample per permit of each lease this JVM holds, by permit id. */
    private final Map<String, Holding> active = new ConcurrentHashMap<>();
    /**
     * Guards changes of {@link #semaphores}, binding, the leases counted as held and their
     * samples, so meters are never removed under a lease that is still being timed. A lock, not
     * a monitor, as everywhere in the library: it may be taken on a caller's virtual thread.
     */
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * @param registry the registry this is a listener of, whose figures the gauges read: asked for at
     *                 each read, as it is built after this (Spring: {@code ObjectProvider::getObject})
     */
    public SemaphoreMetrics(Supplier<? extends SemaphoreRegistry> registry) {
        this.semaphoreRegistry = registry;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        locked(() -> {
            this.meterRegistry = registry;
            semaphores.values().forEach(meters -> meters.register(registry));
            caps.forEach(name -> capGauges(registry, name));
        });
    }

    @Override
    public void permitHeld(Permit permit) {
        locked(() -> {
            SemaphoreMeters meters = meters(permit.semaphoreName());
            Holding holding = new Holding(meters, new ArrayList<>(permit.count()));
            holding.timeUpTo(permit.count());
            meters.leasesHeld++;
            active.put(permit.id(), holding);
        });
    }

    @Override
    public void permitEnded(Permit permit) {
        locked(() -> {
            Holding holding = active.remove(permit.id());
            if (holding != null) {
                holding.timeUpTo(0);
                holding.meters().leasesHeld--;
            }
        });
    }

    /** Part of the lease was given back: only the permits given back stop being timed. */
    @Override
    public void permitCountChanged(Permit permit) {
        locked(() -> {
            Holding holding = active.get(permit.id());
            if (holding != null) {
                holding.timeUpTo(permit.count());
            }
        });
    }

    @Override
    public void leaseLost(Permit permit) {
        count(meters(permit.semaphoreName()).lost, 1);
    }

    @Override
    public void leasesRenewed(String semaphore, int leases) {
        count(meters(semaphore).renewals, leases);
    }

    @Override
    public void releaseDeferred(String semaphore) {
        count(meters(semaphore).deferred, 1);
    }

    @Override
    public void rejected(String semaphore, int permits, SemaphoreRejectedException.Reason reason) {
        count(meters(semaphore).rejections.get(reason), 1);
    }

    @Override
    public void delayedByRate(String semaphore, int permits) {
        count(meters(semaphore).rateDelayed, 1);
    }

    @Override
    public void admittedWithoutRedis(String semaphore, int permits, WhenUnavailable mode) {
        count(meters(semaphore).admissionsWithoutRedis.get(mode), 1);
    }

    /** Makes the semaphore's meters; the {@value #DEGRADED} gauge reads the mode from the registry. */
    @Override
    public void degradedModeChanged(String semaphore, boolean degraded) {
        meters(semaphore);
    }

    /** The first report makes the semaphore's meters; the gauges read its figures from the registry. */
    @Override
    public void usageReported(String semaphore, int limit, int used, int waiters) {
        meters(semaphore);
    }

    /** The first report of a cap makes its gauges, tagged with the base name alone. */
    @Override
    public void totalUsageReported(String semaphore, int limit, int used, int waiters) {
        // added before meterRegistry is read, which bindTo sets before it reads the caps: one of the two
        // registers the gauges (both at worst, which gives the same gauges)
        if (caps.add(semaphore)) {
            MeterRegistry registry = meterRegistry;
            if (registry != null) {
                capGauges(registry, semaphore);
            }
        }
    }

    /** Removes the semaphore's meters, unless this JVM holds a lease on a semaphore of that name again. */
    @Override
    public void semaphoreForgotten(String semaphore) {
        locked(() -> {
            SemaphoreMeters meters = semaphores.get(semaphore);
            if (meters != null && meters.leasesHeld == 0) {
                semaphores.remove(semaphore);
                MeterRegistry registry = meterRegistry;
                if (registry != null) {
                    meters.remove(registry);
                }
            }
        });
    }

    private SemaphoreMeters meters(String semaphore) {
        SemaphoreMeters meters = semaphores.get(semaphore);
        if (meters != null) {
            return meters;
        }
        lock.lock();
        try {
            return semaphores.computeIfAbsent(semaphore, name -> {
                SemaphoreMeters created = new SemaphoreMeters(name);
                MeterRegistry registry = meterRegistry;
                if (registry != null) {
                    created.register(registry);
                }
                return created;
            });
        } finally {
            lock.unlock();
        }
    }

    /** @return the semaphore's figures as the registry keeps them; null before its first report, or once forgotten */
    private @Nullable ReportedUsage usageOf(String semaphore) {
        return semaphoreRegistry.get().inUse(semaphore).map(RedisSemaphore::localState)
                .map(LocalState::reportedUsage).orElse(null);
    }

    /** @return 1 while the semaphore decides its calls without Redis, else 0 (forgotten too: it decides nothing) */
    private double degraded(String semaphore) {
        return semaphoreRegistry.get().inUse(semaphore).map(RedisSemaphore::localState)
                .map(LocalState::degraded).isPresent() ? 1 : 0;
    }

    private void capGauges(MeterRegistry meterRegistry, String baseName) {
        gauges(meterRegistry, OF_A_CAP, baseName, () -> semaphoreRegistry.get().cap(baseName).reportedUsage());
    }

    /** @return the gauges registered, tagged {@code name}, reading {@code usage} at every read */
    private static List<Meter> gauges(MeterRegistry registry, GaugeNames names, String name,
                                      Supplier<@Nullable ReportedUsage> usage) {
        return List.of(
                Gauge.builder(names.available(), () -> figure(usage, ReportedUsage::available))
                        .description("Free permits of " + names.of() + ", as last reported by Redis")
                        .tag(SemaphoreMeters.NAME, name).register(registry),
                Gauge.builder(names.limit(), () -> figure(usage, ReportedUsage::limit))
                        .description("Permits of " + names.of() + ", as last reported by Redis")
                        .tag(SemaphoreMeters.NAME, name).register(registry),
                Gauge.builder(names.waiters(), () -> figure(usage, ReportedUsage::waiters))
                        .description("Callers waiting for " + names.of() + ", fleet-wide, as last reported by Redis")
                        .tag(SemaphoreMeters.NAME, name).register(registry));
    }

    /** Counts on a counter, unless the metrics were not bound yet when it was due to be made. */
    private static void count(@Nullable Counter counter, double amount) {
        if (counter != null) {
            counter.increment(amount);
        }
    }

    /** @return one of the figures now; NaN before the first report (not a made-up 0) */
    private static double figure(Supplier<@Nullable ReportedUsage> usage, ToIntFunction<ReportedUsage> figure) {
        ReportedUsage now = usage.get();
        return now == null ? Double.NaN : figure.applyAsInt(now);
    }

    private void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A lease this JVM holds: whose meters count it, and its samples of {@value #ACTIVE}, one per
     * permit (none when it was taken before the metrics were bound). Changed under the lock.
     */
    private record Holding(SemaphoreMeters meters, List<LongTaskTimer.Sample> samples) {

        /** Starts a sample per permit up to {@code permits}, or stops those beyond it. */
        void timeUpTo(int permits) {
            LongTaskTimer timer = meters.active;
            while (timer != null && samples.size() < permits) {
                samples.add(timer.start());
            }
            while (samples.size() > permits) {
                samples.remove(samples.size() - 1).stop();
            }
        }
    }

    /** The names of a set of gauges, and whose figures they are ({@code of}), for their descriptions. */
    private record GaugeNames(String available, String limit, String waiters, String of) {
    }

    /** The meters of one semaphore. */
    private final class SemaphoreMeters {

        private static final String NAME = "name";
        private static final String REASON = "reason";
        private static final String MODE = "mode";

        private final String name;
        private final List<Meter> registered = new ArrayList<>();
        private volatile @Nullable Counter lost;
        private volatile @Nullable Counter renewals;
        private volatile @Nullable Counter deferred;
        private volatile @Nullable Counter rateDelayed;
        private volatile @Nullable LongTaskTimer active;
        /** One counter per reason, all made at once, so each has a series from the start. */
        private final Map<SemaphoreRejectedException.Reason, Counter> rejections =
                new EnumMap<>(SemaphoreRejectedException.Reason.class);
        /** One counter per mode that admits without Redis, made at once, so each has a series from the start. */
        private final Map<WhenUnavailable, Counter> admissionsWithoutRedis = new EnumMap<>(WhenUnavailable.class);
        /** Guarded by {@link SemaphoreMetrics#lock}. */
        private int leasesHeld;

        SemaphoreMeters(String name) {
            this.name = name;
        }

        void register(MeterRegistry registry) {
            registered.addAll(gauges(registry, OF_A_SEMAPHORE, name, () -> usageOf(name)));
            lost = Counter.builder(LEASE_LOST).description("Permits of a distributed semaphore found lost while held")
                    .tag(NAME, name).register(registry);
            renewals = Counter.builder(LEASE_RENEWALS)
                    .description("Leases of a distributed semaphore extended by renewal").tag(NAME, name).register(registry);
            deferred = Counter.builder(RELEASE_DEFERRED)
                    .description("Releases of a distributed semaphore's permits that returned before Redis confirmed"
                            + " them and went on in the background, as Redis was not answering")
                    .tag(NAME, name).register(registry);
            rateDelayed = Counter.builder(RATE_DELAYED)
                    .description("Acquisitions of a distributed semaphore that waited because its rate's window was"
                            + " full, not for want of permits")
                    .tag(NAME, name).register(registry);
            active = LongTaskTimer.builder(ACTIVE).description("Permits of a distributed semaphore held by this JVM")
                    .tag(NAME, name).register(registry);
            registered.addAll(List.of(lost, renewals, deferred, rateDelayed, active));
            for (SemaphoreRejectedException.Reason reason : SemaphoreRejectedException.Reason.values()) {
                Counter counter = Counter.builder(REJECTIONS)
                        .description("Acquisitions of a distributed semaphore that got no permit, by reason")
                        .tag(NAME, name).tag(REASON, reason.tag()).register(registry);
                rejections.put(reason, counter);
                registered.add(counter);
            }
            for (WhenUnavailable mode : ADMITTING_MODES) {
                Counter counter = Counter.builder(ADMISSIONS_WITHOUT_REDIS)
                        .description("Calls admitted by a distributed semaphore while Redis could not be reached: "
                                + "out of this instance's share (local) or unguarded (allow)")
                        .tag(NAME, name).tag(MODE, mode.tag()).register(registry);
                admissionsWithoutRedis.put(mode, counter);
                registered.add(counter);
            }
            registered.add(Gauge.builder(DEGRADED, () -> degraded(name))
                    .description("1 while a distributed semaphore decides its calls without Redis, which a call "
                            + "found unreachable, else 0")
                    .tag(NAME, name).register(registry));
        }

        void remove(MeterRegistry registry) {
            registered.forEach(registry::remove);
        }
    }
}
