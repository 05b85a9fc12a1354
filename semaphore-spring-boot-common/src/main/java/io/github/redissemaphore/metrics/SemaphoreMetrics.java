package io.github.redissemaphore.metrics;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreListener;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * semaphore {@code name} (and nothing else: a key is part of the name, never a tag of its own). Everything comes from the registry's {@link SemaphoreListener} events,
 * that is from figures the Redis scripts return anyway: metrics cost no Redis call.
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
 * (Spring Boot does it for every {@link MeterBinder} bean). Events before binding update the
 * gauges' figures but are otherwise not counted.
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
    public static final String TOTAL_AVAILABLE = "semaphore.total.permits.available";
    public static final String TOTAL_LIMIT = "semaphore.total.permits.limit";
    public static final String TOTAL_WAITERS = "semaphore.total.waiters";

    private static final GaugeNames OF_A_SEMAPHORE = new GaugeNames(AVAILABLE, LIMIT, WAITERS,
            "a distributed semaphore");
    private static final GaugeNames OF_A_CAP = new GaugeNames(TOTAL_AVAILABLE, TOTAL_LIMIT, TOTAL_WAITERS,
            "all keys of a capped distributed semaphore together");

    private volatile @Nullable MeterRegistry meterRegistry;
    /** The meters of each semaphore, from its first event until it is forgotten. */
    private final Map<String, SemaphoreMeters> semaphores = new ConcurrentHashMap<>();
    /**
     * The gauges of each cap, by base name, from its first report on: kept for the life of the
     * registry, as the core keeps the caps' figures (one per configured cap, however many keys).
     */
    private final Map<String, Gauges> caps = new ConcurrentHashMap<>();
    /** One sample per permit of each lease this JVM holds, by permit id. */
    private final Map<String, Holding> active = new ConcurrentHashMap<>();
    /**
     * Guards changes of {@link #semaphores}, binding, the leases counted as held and their
     * samples, so meters are never removed under a lease that is still being timed. A lock, not
     * a monitor, as everywhere in the library: it may be taken on a caller's virtual thread.
     */
    private final ReentrantLock lock = new ReentrantLock();

    /** Metrics of the registry this is a listener of; bind them to a meter registry to publish them. */
    public SemaphoreMetrics() {
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        locked(() -> {
            this.meterRegistry = registry;
            semaphores.values().forEach(meters -> meters.register(registry));
            caps.forEach((name, gauges) -> gauges.register(registry, OF_A_CAP, name));
            return null;
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
            return null;
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
            return null;
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
            return null;
        });
    }

    @Override
    public void leaseLost(Permit permit) {
        Counter lost = meters(permit.semaphoreName()).lost;
        if (lost != null) {
            lost.increment();
        }
    }

    @Override
    public void leasesRenewed(String semaphore, int leases) {
        Counter renewals = meters(semaphore).renewals;
        if (renewals != null) {
            renewals.increment(leases);
        }
    }

    @Override
    public void releaseDeferred(String semaphore) {
        Counter deferred = meters(semaphore).deferred;
        if (deferred != null) {
            deferred.increment();
        }
    }

    @Override
    public void usageReported(String semaphore, int limit, int used, int waiters) {
        meters(semaphore).gauges.figures = new Figures(limit, used, waiters);
    }

    /** The cap's figures, in gauges tagged with the base name alone. */
    @Override
    public void totalUsageReported(String semaphore, int limit, int used, int waiters) {
        Gauges gauges = caps.get(semaphore);
        if (gauges == null) {
            gauges = locked(() -> caps.computeIfAbsent(semaphore, name -> {
                Gauges created = new Gauges();
                MeterRegistry registry = meterRegistry;
                if (registry != null) {
                    created.register(registry, OF_A_CAP, name);
                }
                return created;
            }));
        }
        gauges.figures = new Figures(limit, used, waiters);
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
            return null;
        });
    }

    private SemaphoreMeters meters(String semaphore) {
        SemaphoreMeters meters = semaphores.get(semaphore);
        if (meters != null) {
            return meters;
        }
        return locked(() -> semaphores.computeIfAbsent(semaphore, name -> {
            SemaphoreMeters created = new SemaphoreMeters(name);
            MeterRegistry registry = meterRegistry;
            if (registry != null) {
                created.register(registry);
            }
            return created;
        }));
    }

    private <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
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

    /** The last figures Redis reported, replaced as a whole so a gauge never reads half a report. */
    private record Figures(int limit, int used, int waiters) {
    }

    /**
     * The names of a set of gauges, and whose figures they are, for their descriptions.
     *
     * @param of e.g. "a distributed semaphore"
     */
    private record GaugeNames(String available, String limit, String waiters, String of) {
    }

    /** Free permits, limit and waiters of one set of figures: a semaphore's, or a cap's over all its keys. */
    private static final class Gauges {

        /** Null until the first report: the gauges read NaN, not a made-up 0. */
        private volatile @Nullable Figures figures;

        /** @return the gauges registered, tagged {@code name} */
        List<Meter> register(MeterRegistry registry, GaugeNames names, String name) {
            return List.of(
                    Gauge.builder(names.available(), this, gauges -> gauges.read(f -> Math.max(0, f.limit() - f.used())))
                            .description("Free permits of " + names.of() + ", as last reported by Redis")
                            .tag(SemaphoreMeters.NAME, name).register(registry),
                    Gauge.builder(names.limit(), this, gauges -> gauges.read(Figures::limit))
                            .description("Permits of " + names.of() + ", as last reported by Redis")
                            .tag(SemaphoreMeters.NAME, name).register(registry),
                    Gauge.builder(names.waiters(), this, gauges -> gauges.read(Figures::waiters))
                            .description("Callers waiting for " + names.of() + ", fleet-wide, as last reported by Redis")
                            .tag(SemaphoreMeters.NAME, name).register(registry));
        }

        private double read(ToIntFunction<Figures> figure) {
            Figures now = figures;
            return now == null ? Double.NaN : figure.applyAsInt(now);
        }
    }

    /** The meters of one semaphore. */
    private static final class SemaphoreMeters {

        private static final String NAME = "name";

        private final String name;
        private final List<Meter> registered = new ArrayList<>();
        private final Gauges gauges = new Gauges();
        private volatile @Nullable Counter lost;
        private volatile @Nullable Counter renewals;
        private volatile @Nullable Counter deferred;
        private volatile @Nullable LongTaskTimer active;
        /** Guarded by {@link SemaphoreMetrics#lock}. */
        private int leasesHeld;

        SemaphoreMeters(String name) {
            this.name = name;
        }

        void register(MeterRegistry registry) {
            registered.addAll(gauges.register(registry, OF_A_SEMAPHORE, name));
            lost = Counter.builder(LEASE_LOST).description("Permits of a distributed semaphore found lost while held")
                    .tag(NAME, name).register(registry);
            renewals = Counter.builder(LEASE_RENEWALS)
                    .description("Leases of a distributed semaphore extended by renewal")
                    .tag(NAME, name).register(registry);
            deferred = Counter.builder(RELEASE_DEFERRED)
                    .description("Releases of a distributed semaphore's permits that returned before Redis confirmed"
                            + " them and went on in the background, as Redis was not answering")
                    .tag(NAME, name).register(registry);
            active = LongTaskTimer.builder(ACTIVE).description("Permits of a distributed semaphore held by this JVM")
                    .tag(NAME, name).register(registry);
            registered.add(lost);
            registered.add(renewals);
            registered.add(deferred);
            registered.add(active);
        }

        void remove(MeterRegistry registry) {
            registered.forEach(registry::remove);
        }
    }
}
