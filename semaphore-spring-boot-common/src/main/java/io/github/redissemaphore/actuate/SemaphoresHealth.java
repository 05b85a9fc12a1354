package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the {@code semaphores} health contributor reports, apart from Spring Boot's health API, which
 * differs between Boot lines (each starter's {@code SemaphoresHealthIndicator} turns this into its
 * line's {@code Health}). Read from memory: no Redis call, so a health probe never waits for Redis.
 *
 * <p>DOWN only when renewals of permits this JVM holds have been failing for longer than a third
 * of the shortest lease held: the leases are about to be lost, and another JVM may soon take
 * permits this one still counts on. Everything else is UP, including a Redis that is unreachable
 * while nothing is held (the Redis health contributor reports that), and an application that has
 * not used a semaphore yet. A cap over the keys of a capped semaphore changes neither: it shows
 * its figures only.
 *
 * @param down    whether some semaphore's leases are at risk
 * @param details one entry per semaphore, named after it: {@code permitsHeld}, {@code waiters}
 *                (this JVM's), {@code inboxSubscribed}, and while renewals fail
 *                {@code renewalFailingSince} (and {@code leasesAtRisk} once that is DOWN); and one
 *                per cap of a capped semaphore, named after its base name: {@code totalLimit},
 *                {@code totalUsed}, {@code totalWaiters} (all keys together, fleet-wide, as Redis
 *                last reported them to this JVM), {@code permitsHeld} and {@code waiters} (this
 *                JVM's, over its keys)
 */
public record SemaphoresHealth(boolean down, Map<String, Object> details) {

    /** @return the health of the semaphores {@code registry} has used in this JVM, now, without their caps */
    public static SemaphoresHealth of(SemaphoreRegistry registry) {
        return of(registry, new ReportedCaps());
    }

    /**
     * @param caps the caps' figures, heard as a listener of {@code registry}
     * @return the health of the semaphores {@code registry} has used in this JVM, now, with the caps
     *         {@code caps} has heard of
     */
    public static SemaphoresHealth of(SemaphoreRegistry registry, ReportedCaps caps) {
        Instant now = Instant.now();
        boolean leasesAtRisk = false;
        Map<String, Object> details = new TreeMap<>();
        for (RedisSemaphore semaphore : registry.semaphores()) {
            LocalState state = semaphore.localState();
            boolean atRisk = atRisk(semaphore, state, now);
            leasesAtRisk |= atRisk;
            details.put(state.name(), details(state, atRisk));
        }
        caps.figures().forEach((baseName, figures) -> details.put(baseName, capDetails(registry, baseName, figures)));
        return new SemaphoresHealth(leasesAtRisk, details);
    }

    private static Map<String, Object> capDetails(SemaphoreRegistry registry, String baseName,
                                                  ReportedCaps.Figures figures) {
        int permitsHeld = 0;
        int waiters = 0;
        for (RedisSemaphore semaphore : registry.semaphores()) {
            if (semaphore.settings().capped() && semaphore.name().startsWith(baseName + ":")) {
                LocalState key = semaphore.localState();
                permitsHeld += key.permitsHeld();
                waiters += key.waiters();
            }
        }
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("totalLimit", figures.limit());
        details.put("totalUsed", figures.used());
        details.put("totalWaiters", figures.waiters());
        details.put("permitsHeld", permitsHeld);
        details.put("waiters", waiters);
        return details;
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
