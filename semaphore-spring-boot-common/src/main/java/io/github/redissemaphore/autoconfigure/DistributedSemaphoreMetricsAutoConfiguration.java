package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.metrics.SemaphoreMetrics;

import java.util.function.Predicate;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Publishes the semaphores' {@link SemaphoreMetrics} when the application has a Micrometer
 * {@link MeterRegistry}, unless {@value #METRICS_ENABLED} is false. The metrics are a listener of
 * the registry that {@link DistributedSemaphoreAutoConfiguration} builds (it takes every listener
 * bean), and a {@code MeterBinder} that Spring Boot binds to the meter registry.
 *
 * <p>The {@code semaphore.acquire} timer is made once per semaphore: by the meter handler of the
 * application's {@link ObservationRegistry} from the {@code semaphore.acquire} observation where
 * that handler does see the observation, else by {@link SemaphoreMetrics}. Whether it does is
 * decided on facts, per semaphore, at its first acquisition ({@link TimedByObservations}), not on
 * whether an {@code ObservationRegistry} bean exists: a registry of the application's own built
 * without it, or {@code management.observations.enable.semaphore=false}, leaves the timing to
 * {@link SemaphoreMetrics}.
 */
@AutoConfiguration(after = DistributedSemaphoreAutoConfiguration.class, afterName = {
        // Boot 4
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        // Boot 3
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, SemaphoreRegistry.class})
@ConditionalOnBean({MeterRegistry.class, SemaphoreRegistry.class})
@Conditional(OnEnabledCondition.class)
public final class DistributedSemaphoreMetricsAutoConfiguration {

    /** The property that switches the semaphores' meters off. */
    public static final String METRICS_ENABLED = "distributed-semaphore.metrics.enabled";

    @Bean
    @ConditionalOnMissingBean
    @Conditional(OnMetricsEnabled.class)
    public SemaphoreMetrics semaphoreMetrics(ObjectProvider<SemaphoreRegistry> semaphoreRegistry,
                                             ObjectProvider<ObservationRegistry> observationRegistry,
                                             ObjectProvider<MeterObservationHandler<?>> meterObservationHandlers) {
        return new SemaphoreMetrics(new TimedByObservations(semaphoreRegistry, observationRegistry,
                meterObservationHandlers));
    }

    /**
     * Meters off: also those an observation meter handler would make of the semaphores'
     * observations ({@code semaphore.acquire}, {@code semaphore.hold}); their spans stay.
     */
    @Bean
    @ConditionalOnMissingBean(name = "semaphoreMetersOff")
    @Conditional(OnMetricsDisabled.class)
    public MeterFilter semaphoreMetersOff() {
        return MeterFilter.denyNameStartsWith("semaphore.");
    }

    /**
     * Whether an observation meter handler times the acquisitions of a semaphore, from its
     * {@code semaphore.acquire} observation: the semaphore registry in use reports them to the
     * application's {@link ObservationRegistry} (to which Spring Boot gives every
     * {@link MeterObservationHandler} bean), there is such a handler, and no predicate of that
     * registry switches the observation off. Asked at a semaphore's first acquisition, when the
     * beans exist; a registry of another kind, whose observations cannot be seen from here, is
     * taken as not observed.
     */
    static final class TimedByObservations implements Predicate<String> {

        private final ObjectProvider<SemaphoreRegistry> semaphoreRegistry;
        private final ObjectProvider<ObservationRegistry> observationRegistry;
        private final ObjectProvider<MeterObservationHandler<?>> meterObservationHandlers;

        TimedByObservations(ObjectProvider<SemaphoreRegistry> semaphoreRegistry,
                            ObjectProvider<ObservationRegistry> observationRegistry,
                            ObjectProvider<MeterObservationHandler<?>> meterObservationHandlers) {
            this.semaphoreRegistry = semaphoreRegistry;
            this.observationRegistry = observationRegistry;
            this.meterObservationHandlers = meterObservationHandlers;
        }

        @Override
        public boolean test(String semaphore) {
            try {
                ObservationRegistry observations = observationRegistry.getIfUnique();
                SemaphoreRegistry registry = semaphoreRegistry.getIfUnique();
                return observations != null && meterObservationHandlers.stream().findAny().isPresent()
                        && registry != null && registry.observesAcquisitions(semaphore, observations);
            } catch (BeansException e) {
                // A last acquisition while the context closes: timed here rather than not at all.
                return false;
            }
        }
    }

    /** {@value #METRICS_ENABLED} is true or not set; a value that is neither true nor false stops the start-up. */
    static final class OnMetricsEnabled extends BoundBooleanCondition {

        OnMetricsEnabled() {
            super(METRICS_ENABLED, true);
        }
    }

    /** {@value #METRICS_ENABLED} is false; a value that is neither true nor false stops the start-up. */
    static final class OnMetricsDisabled extends BoundBooleanCondition {

        OnMetricsDisabled() {
            super(METRICS_ENABLED, false);
        }
    }
}
