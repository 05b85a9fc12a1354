package io.github.redissemaphore.core.internal.redis;

/**
 * Usage figures every script returns: the values for gauges, free of charge.
 *
 * @param used                    permits held
 * @param limit                   the limit of the call: the override when one is set, else the caller's
 * @param waiters                 callers in the queue
 * @param serverMicros            Redis server time of the reply: tells which of two figures is newer
 * @param earliestLeaseEndMillis  how long until the earliest lease ends, at most (-1: no lease), so
 *                                a JVM with waiters can call again the moment an expired lease
 *                                frees a permit
 * @param previousConfiguredLimit the configured limit the previous call carried (0: none known),
 *                                from which a JVM configured otherwise learns of the mismatch
 * @param override                the runtime limit set in Redis (0: none)
 */
public record Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis,
                    int previousConfiguredLimit, int override) {

    /** @return permits free now */
    public int available() {
        return Math.max(limit - used, 0);
    }

    /** @return whether {@code limit} is a runtime limit set in Redis rather than the caller's own */
    public boolean overridden() {
        return override > 0;
    }
}
