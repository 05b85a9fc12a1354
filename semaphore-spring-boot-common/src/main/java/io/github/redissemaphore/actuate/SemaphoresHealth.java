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
 * of the shortest lease held, on a semaphore that works through Redis: the leases are about to be
 * lost, and another JVM may soon take permits this one still counts on. {@value #DEGRADED} (a
 * status of its own, which a probe can tell from DOWN) when no semaphore is so, but one decides its
 * calls without Redis ({@link LocalState#degraded()}: {@code when-unavailable} local or allow, and
 * a call found Redis unreachable): its renewals fail too, but what it admits meanwhile is what its
 * mode allows, and the application serves its calls, so it is no reason to take the instance out
 * of a load balancer. Everything else is UP, including a Redis that is unreachable while nothing
 * is held (the Redis health contributor reports that), and an application that has not used a
 * semaphore yet. A cap over the keys of a capped semaphore changes none of these: it shows its
 * figures only.
 *
 * @param down     whether some semaphore that works through Redis has its leases at risk
 * @param degraded whether some semaphore decides its calls without Redis
 * @param details  one entry per semaphore, named after it: {@code permitsHeld}, {@code waiters}
 *                 (this JVM's), {@code inboxSubscribed}, and while renewals fail
 *                 {@code renewalFailingSince} (and {@code leasesAtRisk} once a third of the
 *                 shortest lease has passed); in degraded mode {@code degraded} (true),
 *                 {@code whenUnavailable} ({@code local}, {@code allow}), {@code degradedSince},
 *                 {@code localShare} (the permits it may grant on its own; 0 with allow) and
 *                 {@code localPermitsHeld} (those of them still held; {@code permitsHeld} counts
 *                 Redis's grants only); and one per cap of a capped semaphore, named after its base
 *                 name: {@code totalLimit}, {@code totalUsed}, {@code totalWaiters} (all keys
 *                 together, fleet-wide, as Redis last reported them to this JVM), {@code permitsHeld}
 *                 and {@code waiters} (this JVM's, over its keys)
 */
public record SemaphoresHealth(boolean down, boolean degraded, Map<String, Object> details) {

    /**
     * The code of the status of a semaphore that decides its calls without Redis, and of the
     * contributor while one does and none is DOWN. Spring Boot serves it with HTTP 200 (only DOWN
     * and OUT_OF_SERVICE are 503 by default), and its default status order, which does not list it,
     * leaves it out of the application's overall status: add it to
     * {@code management.endpoint.health.status.order} (DOWN, OUT_OF_SERVICE, DEGRADED, UP, UNKNOWN)
     * for the overall status to show it.
     */
    public static final String DEGRADED = "DEGRADED";

    /** @return the code of the contributor's status: DOWN, {@value #DEGRADED} or UP, in that precedence */
    public String status() {
        return down ? "DOWN" : degraded ? DEGRADED : "UP";
    }

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
        boolean anyDegraded = false;
        Map<String, Object> details = new TreeMap<>();
        for (RedisSemaphore semaphore : registry.semaphores()) {
            LocalState state = semaphore.localState();
            boolean atRisk = atRisk(semaphore, state, now);
            // renewals fail all through an outage: expected of a degraded semaphore, which serves its mode meanwhile
            leasesAtRisk |= atRisk && state.degraded() == null;
            anyDegraded |= state.degraded() != null;
            details.put(state.name(), details(state, atRisk));
        }
        caps.figures().forEach((baseName, figures) -> details.put(baseName, capDetails(registry, baseName, figures)));
        return new SemaphoresHealth(leasesAtRisk, anyDegraded, details);
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
        LocalState.Degraded degraded = state.degraded();
        if (degraded != null) {
            details.put("degraded", true);
            details.put("whenUnavailable", degraded.mode().tag());
            details.put("degradedSince", degraded.since().toString());
            details.put("localShare", degraded.share());
            details.put("localPermitsHeld", degraded.localPermitsHeld());
        }
        return details;
    }
}
