package io.github.redissemaphore.autoconfigure.health;

import io.github.redissemaphore.actuate.ReportedCaps;
import io.github.redissemaphore.actuate.health.SemaphoresHealthIndicator;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.OnEnabledCondition;
import io.github.redissemaphore.core.SemaphoreRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The {@code semaphores} health contributor ({@link SemaphoresHealthIndicator}) when Spring Boot's
 * health support is present; off with {@code management.health.semaphores.enabled=false}.
 */
@AutoConfiguration(after = DistributedSemaphoreAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class, SemaphoreRegistry.class})
@ConditionalOnBean(SemaphoreRegistry.class)
@Conditional(OnEnabledCondition.class)
@ConditionalOnEnabledHealthIndicator("semaphores")
public final class DistributedSemaphoreHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "semaphoresHealthIndicator")
    public SemaphoresHealthIndicator semaphoresHealthIndicator(SemaphoreRegistry registry, ReportedCaps caps) {
        return new SemaphoresHealthIndicator(registry, caps);
    }

    /**
     * The caps' figures the health contributor shows, heard as a listener of the registry (which
     * takes every listener bean), as the health contributor never calls Redis.
     */
    @Bean
    @ConditionalOnMissingBean
    public ReportedCaps semaphoresReportedCaps() {
        return new ReportedCaps();
    }
}
