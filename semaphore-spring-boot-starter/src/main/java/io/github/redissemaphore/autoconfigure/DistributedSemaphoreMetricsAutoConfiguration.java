package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.metrics.SemaphoreMetrics;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Publishes the semaphores' {@link SemaphoreMetrics} when the application has a Micrometer
 * {@link MeterRegistry}. The metrics are a listener of the registry that
 * {@link DistributedSemaphoreAutoConfiguration} builds (it takes every listener bean), and a
 * {@code MeterBinder} that Spring Boot binds to the meter registry.
 */
@AutoConfiguration(after = DistributedSemaphoreAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, SemaphoreRegistry.class})
@ConditionalOnBean({MeterRegistry.class, SemaphoreRegistry.class})
@ConditionalOnBooleanProperty(name = "distributed-semaphore.enabled", matchIfMissing = true)
public final class DistributedSemaphoreMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public SemaphoreMetrics semaphoreMetrics() {
        return new SemaphoreMetrics();
    }
}
