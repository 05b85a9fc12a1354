package io.github.redissemaphore.actuate.health;

import io.github.redissemaphore.actuate.SemaphoresHealth;
import io.github.redissemaphore.core.SemaphoreRegistry;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code semaphores} health contributor on Spring Boot 3's health API: this JVM's side of each
 * semaphore it uses, from memory, DOWN only while the leases it holds are at risk. What it reports
 * and when: {@link SemaphoresHealth}.
 */
public class SemaphoresHealthIndicator extends AbstractHealthIndicator {

    private final SemaphoreRegistry registry;

    public SemaphoresHealthIndicator(SemaphoreRegistry registry) {
        super("Semaphores health check failed");
        this.registry = registry;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        SemaphoresHealth health = SemaphoresHealth.of(registry);
        (health.down() ? builder.down() : builder.up()).withDetails(health.details());
    }
}
