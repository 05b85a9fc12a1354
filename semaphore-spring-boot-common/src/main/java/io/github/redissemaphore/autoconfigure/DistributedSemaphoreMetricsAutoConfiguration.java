package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.metrics.SemaphoreMetrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.observation.ObservationRegistry;
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
 * <p>The {@code semaphore.acquire} timer is made one way only: by an observation meter handler from
 * the {@code semaphore.acquire} observation, tagged {@code name} (the base name), {@code outcome} and
 * {@code error}. That handler is the application's, in its {@link ObservationRegistry}, where it has
 * one (Boot makes one with Actuator); where it has none, this configuration makes an observation
 * registry with a meter handler of the application's {@link MeterRegistry} for the semaphore
 * registry alone ({@link AcquireTimerObservations}), which makes the timer and nothing else.
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
    public SemaphoreMetrics semaphoreMetrics(ObjectProvider<SemaphoreRegistry> registry) {
        // read at each gauge read: the registry takes the metrics as a listener, so it is made after them
        return new SemaphoreMetrics(registry::getObject);
    }

    /**
     * Without an {@link ObservationRegistry} of the application's, one for the semaphore registry
     * alone, whose meter handler makes the {@code semaphore.acquire} timer from the observation of
     * that name (its timer only: no long-task timer, and no other observation of the semaphores
     * goes through it), so that the timer exists with the same tags as where the application
     * observes the semaphores.
     */
    @Bean
    @ConditionalOnMissingBean(ObservationRegistry.class)
    @Conditional(OnMetricsEnabled.class)
    AcquireTimerObservations semaphoreAcquireTimerObservations(MeterRegistry meterRegistry) {
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig()
                .observationPredicate((name, context) -> SemaphoreMetrics.ACQUIRE.equals(name))
                .observationHandler(new DefaultMeterObservationHandler(meterRegistry,
                        DefaultMeterObservationHandler.IgnoredMeters.LONG_TASK_TIMER));
        return new AcquireTimerObservations(observations);
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
