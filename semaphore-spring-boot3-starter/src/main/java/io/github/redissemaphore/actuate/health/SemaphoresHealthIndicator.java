package io.github.redissemaphore.actuate.health;

import io.github.redissemaphore.actuate.ReportedCaps;
import io.github.redissemaphore.actuate.SemaphoresHealth;
import io.github.redissemaphore.core.SemaphoreRegistry;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code semaphores} health contributor on Spring Boot 3's health API: this JVM's side of each
 * semaphore it uses, from memory, DOWN only while the leases it holds are at risk,
 * {@value SemaphoresHealth#DEGRADED} while a semaphore decides its calls without Redis (served with
 * HTTP 200). What it reports and when: {@link SemaphoresHealth}.
 */
public class SemaphoresHealthIndicator extends AbstractHealthIndicator {

    private final SemaphoreRegistry registry;
    private final ReportedCaps caps;

    /** Without the caps of capped semaphores. */
    public SemaphoresHealthIndicator(SemaphoreRegistry registry) {
        this(registry, new ReportedCaps());
    }

    /** @param caps the caps' figures, a listener of {@code registry} */
    public SemaphoresHealthIndicator(SemaphoreRegistry registry, ReportedCaps caps) {
        super("Semaphores health check failed");
        this.registry = registry;
        this.caps = caps;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        SemaphoresHealth health = SemaphoresHealth.of(registry, caps);
        builder.status(health.status()).withDetails(health.details());
    }
}
