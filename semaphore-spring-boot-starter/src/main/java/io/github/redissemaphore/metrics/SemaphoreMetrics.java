package io.github.redissemaphore.metrics;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreListener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Publishes what the semaphores of one registry do as Micrometer meters, each tagged with the
 * semaphore {@code name}. Everything comes from the registry's {@link SemaphoreListener} events,
 * that is from figures the Redis scripts return anyway: metrics cost no Redis call.
 *
 * <ul>
 * <li>{@value #ACQUIRE} timer, tag {@code outcome} = acquired | rejected | error: how long
 *     acquisitions took, waiting included;</li>
 * <li>{@value #ACTIVE} long-task timer: permits this JVM holds now, and for how long;</li>
 * <li>{@value #AVAILABLE}, {@value #LIMIT}, {@value #WAITERS} gauges: the semaphore fleet-wide as
 *     last reported by Redis to this JVM;</li>
 * <li>{@value #LEASE_LOST} counter: permits found lost while held (expired, force-released);</li>
 * <li>{@value #LEASE_RENEWALS} counter: leases extended by renewal.</li>
 * </ul>
 *
 * Register it with the semaphore registry as a listener, and bind it to the meter registry (Spring
 * Boot does it for every {@link MeterBinder} bean). Events before binding update the gauges'
 * figures but are otherwise not counted.
 */
public class SemaphoreMetrics implements SemaphoreListener, MeterBinder {

    public static final String ACQUIRE = "semaphore.acquire";
    public static final String ACTIVE = "semaphore.active";
    public static final String AVAILABLE = "semaphore.permits.available";
    public static final String LIMIT = "semaphore.permits.limit";
    public static final String WAITERS = "semaphore.waiters";
    public static final String LEASE_LOST = "semaphore.lease.lost";
    public static final String LEASE_RENEWALS = "semaphore.lease.renewals";

    private static final String NAME = "name";

    private volatile MeterRegistry meterRegistry;
    /** The last figures Redis reported per semaphore: what the gauges read. */
    private final Map<String, Usage> usage = new ConcurrentHashMap<>();
    /** One sample per permit of each lease this JVM holds, by permit id. */
    private final Map<String, List<LongTaskTimer.Sample>> active = new ConcurrentHashMap<>();

    @Override
    public void bindTo(MeterRegistry registry) {
        synchronized (usage) {
            this.meterRegistry = registry;
            usage.forEach((name, figures) -> registerGauges(registry, name, figures));
        }
    }

    @Override
    public void acquisitionEnded(String semaphore, int permits, Outcome outcome, Duration elapsed) {
        MeterRegistry registry = meterRegistry;
        if (registry != null) {
            Timer.builder(ACQUIRE)
                    .description("Time to acquire permits of a distributed semaphore, waiting included")
                    .tag(NAME, semaphore)
                    .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                    .register(registry)
                    .record(elapsed);
        }
    }

    @Override
    public void permitHeld(Permit permit) {
        MeterRegistry registry = meterRegistry;
        if (registry != null) {
            LongTaskTimer timer = LongTaskTimer.builder(ACTIVE)
                    .description("Permits of a distributed semaphore held by this JVM")
                    .tag(NAME, permit.semaphoreName())
                    .register(registry);
            List<LongTaskTimer.Sample> samples = new ArrayList<>(permit.count());
            for (int i = 0; i < permit.count(); i++) {
                samples.add(timer.start());
            }
            active.put(permit.id(), samples);
        }
    }

    @Override
    public void permitEnded(Permit permit) {
        List<LongTaskTimer.Sample> samples = active.remove(permit.id());
        if (samples != null) {
            samples.forEach(LongTaskTimer.Sample::stop);
        }
    }

    @Override
    public void leaseLost(Permit permit) {
        count(LEASE_LOST, "Permits of a distributed semaphore found lost while held", permit.semaphoreName(), 1);
    }

    @Override
    public void leasesRenewed(String semaphore, int leases) {
        count(LEASE_RENEWALS, "Leases of a distributed semaphore extended by renewal", semaphore, leases);
    }

    @Override
    public void usageReported(String semaphore, int limit, int used, int waiters) {
        Usage figures = usage.get(semaphore);
        if (figures == null) {
            synchronized (usage) {
                // Checked again under the lock: only the thread that creates the figures registers gauges.
                figures = usage.get(semaphore);
                if (figures == null) {
                    figures = new Usage();
                    usage.put(semaphore, figures);
                    MeterRegistry registry = meterRegistry;
                    if (registry != null) {
                        registerGauges(registry, semaphore, figures);
                    }
                }
            }
        }
        figures.update(limit, used, waiters);
    }

    private void count(String meter, String description, String semaphore, int amount) {
        MeterRegistry registry = meterRegistry;
        if (registry != null) {
            Counter.builder(meter).description(description).tag(NAME, semaphore).register(registry).increment(amount);
        }
    }

    private static void registerGauges(MeterRegistry registry, String semaphore, Usage figures) {
        Gauge.builder(AVAILABLE, figures, Usage::available)
                .description("Free permits of a distributed semaphore, as last reported by Redis")
                .tag(NAME, semaphore).register(registry);
        Gauge.builder(LIMIT, figures, Usage::limit)
                .description("Permits of a distributed semaphore, as last reported by Redis")
                .tag(NAME, semaphore).register(registry);
        Gauge.builder(WAITERS, figures, Usage::waiters)
                .description("Callers waiting for a distributed semaphore, fleet-wide, as last reported by Redis")
                .tag(NAME, semaphore).register(registry);
    }

    /** The last figures of one semaphore, replaced as a whole so a gauge never reads half a report. */
    private static final class Usage {

        private record Figures(int limit, int used, int waiters) {
        }

        private volatile Figures figures = new Figures(0, 0, 0);

        void update(int limit, int used, int waiters) {
            figures = new Figures(limit, used, waiters);
        }

        double limit() {
            return figures.limit();
        }

        double available() {
            Figures now = figures;
            return Math.max(0, now.limit() - now.used());
        }

        double waiters() {
            return figures.waiters();
        }
    }
}
