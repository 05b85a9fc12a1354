package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;

/**
 * What tests do to a registry that no user can: reached here, from test code in the engine's
 * package, so none of it is on the public surface.
 */
public final class Engines {

    private Engines() {
    }

    /**
     * Stops the registry as a JVM that dies would: no tick, no inbox, no call to Redis ever again,
     * nothing released or cancelled. See {@link DefaultSemaphoreRegistry#halt()}.
     */
    public static void halt(SemaphoreRegistry registry) {
        ((DefaultSemaphoreRegistry) registry).halt();
    }

    /** Runs the semaphore's renewal tick now (a renew call for its leases and waiters), as its timer would. */
    public static void renewNow(io.github.redissemaphore.core.RedisSemaphore semaphore) {
        ((DefaultRedisSemaphore) semaphore).renewNow();
    }

    /** Forgets idle keyed semaphores now, as the registry does every minute. */
    public static void evictIdleKeyed(SemaphoreRegistry registry) {
        ((DefaultSemaphoreRegistry) registry).evictIdleKeyed();
    }

    /**
     * Runs {@code action} each time Redis answered again after an outage, just before the
     * registry's degraded semaphores write back their permits: a second outage can start there.
     */
    public static void beforeRecovery(SemaphoreRegistry registry, Runnable action) {
        ((DefaultSemaphoreRegistry) registry).outage().beforeRecovery(action);
    }

    /** @return System.nanoTime() at which the permit's lease ends as its JVM measures it */
    public static long leaseEndsNanos(Permit permit) {
        return ((DefaultPermit) permit).lease().leaseEndsNanos();
    }
}
