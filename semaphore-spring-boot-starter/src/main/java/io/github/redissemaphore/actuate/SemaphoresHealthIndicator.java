package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code semaphores} health contributor: this JVM's side of each semaphore it uses, from
 * memory (no Redis call, so a health probe never waits for Redis). DOWN only when renewals of
 * permits this JVM holds have been failing for longer than a third of the shortest lease held:
 * the leases are about to be lost, and another JVM may soon take permits this one still counts
 * on. Everything else is UP, including a Redis that is unreachable while nothing is held (the
 * Redis health contributor reports that), and an application that has not used a semaphore yet.
 *
 * <p>One detail per semaphore, named after it: {@code permitsHeld}, {@code waiters} (this
 * JVM's), {@code inboxSubscribed}, and while renewals fail {@code renewalFailingSince} (and
 * {@code leasesAtRisk} once that is DOWN).
 */
public class SemaphoresHealthIndicator extends AbstractHealthIndicator {

    private final SemaphoreRegistry registry;

    public SemaphoresHealthIndicator(SemaphoreRegistry registry) {
        super("Semaphores health check failed");
        this.registry = registry;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Instant now = Instant.now();
        boolean leasesAtRisk = false;
        Map<String, Object> details = new TreeMap<>();
        for (RedisSemaphore semaphore : registry.semaphores()) {
            LocalState state = semaphore.localState();
            boolean atRisk = atRisk(semaphore, state, now);
            leasesAtRisk |= atRisk;
            details.put(state.name(), details(state, atRisk));
        }
        (leasesAtRisk ? builder.down() : builder.up()).withDetails(details);
    }

    /** Renewals of held, auto-renewed leases failing for more than a third of the shortest lease held. */
    private static boolean atRisk(RedisSemaphore semaphore, LocalState state, Instant now) {
        Instant since = state.renewalFailingSince();
        return since != null && state.shortestLease() != null && semaphore.settings().autoRenew()
                && Duration.between(since, now).compareTo(state.shortestLease().dividedBy(3)) > 0;
    }

    private static Map<String, Object> details(LocalState state, boolean atRisk) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("permitsHeld", state.permitsHeld());
        details.put("waiters", state.waiters());
        details.put("inboxSubscribed", state.inboxSubscribed());
        if (state.renewalFailingSince() != null) {
            details.put("renewalFailingSince", state.renewalFailingSince().toString());
        }
        if (atRisk) {
            details.put("leasesAtRisk", true);
        }
        return details;
    }
}
