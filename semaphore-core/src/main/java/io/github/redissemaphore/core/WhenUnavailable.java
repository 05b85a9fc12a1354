package io.github.redissemaphore.core;

/**
 * What a semaphore does while Redis cannot be reached ({@link SemaphoreSettings#whenUnavailable()}):
 * after one call found Redis unreachable (no connection, or no answer within the Redis timeout),
 * until a background probe hears Redis answer again.
 */
public enum WhenUnavailable {

    /**
     * Every call fails with a {@link SemaphoreUnavailableException} within the Redis timeout, as
     * before degraded modes existed: never more than the limit, and the guarded work stops while
     * Redis is away. The default.
     */
    REJECT,

    /**
     * Each instance grants on its own at most its share of the permits
     * ({@link SemaphoreSettings#localPermits()}, or its part of the fleet as Redis last showed
     * it), with waits, deadlines and its own callers' arrival order; the permits it granted so
     * are written to Redis as holders once Redis answers again, and drain there. A permit
     * granted so says it ({@link Permit#isLocal()}) and carries fencing token 0.
     */
    LOCAL,

    /**
     * Every call runs unguarded while Redis cannot be reached, and is counted: the limit does
     * not hold then. For work whose limit protects nothing that would break.
     */
    ALLOW;

    /** @return the name in lower case, as {@code when-unavailable} takes it and metrics tag it */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
