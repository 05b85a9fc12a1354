package io.github.redissemaphore.core.internal.redis;

import org.jspecify.annotations.Nullable;

/**
 * Usage figures every script returns: the values for gauges, free of charge.
 *
 * @param used                    permits held
 * @param limit                   the limit of the call: the override when one is set, else the caller's
 * @param waiters                 callers in the queue
 * @param serverMicros            Redis server time of the reply: tells which of two figures is newer
 * @param earliestLeaseEndMillis  how long until the earliest lease ends, at most (-1: no lease), so
 *                                a JVM with waiters can call again the moment an expired lease
 *                                frees a permit; with a rate whose window is full while others
 *                                wait, at most the ms until the window frees a slot, so the
 *                                waiting JVMs call again then (_rate.lua, R3)
 * @param previousConfiguredLimit the configured limit the previous call carried (0: none known),
 *                                from which a JVM configured otherwise learns of the mismatch
 * @param override                the runtime limit set in Redis (0: none)
 * @param total                   of a capped semaphore's key, the figures of its cap; else null
 * @param otherRate               the rate another JVM's call left in Redis when it differs from this
 *                                call's ({@code "<rate-limit>/<rate-period ms>"}, {@code "-"}: that call
 *                                had none); null when they agree or none is known
 */
public record Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis,
                    int previousConfiguredLimit, int override, @Nullable Total total, @Nullable String otherRate) {

    /** Figures of a semaphore without a rate mismatch. */
    public Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis,
                 int previousConfiguredLimit, int override, @Nullable Total total) {
        this(used, limit, waiters, serverMicros, earliestLeaseEndMillis, previousConfiguredLimit, override, total,
                null);
    }

    /** Figures of a semaphore without a cap. */
    public Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis,
                 int previousConfiguredLimit, int override) {
        this(used, limit, waiters, serverMicros, earliestLeaseEndMillis, previousConfiguredLimit, override, null);
    }

    /**
     * The figures of a cap over all keys of a capped semaphore, which every reply about one of its
     * keys carries too.
     *
     * @param used                    permits held, all keys together
     * @param limit                   the cap of the call: its runtime limit when one is set, else the caller's
     * @param waiters                 callers waiting, all keys together
     * @param previousConfiguredLimit the cap the previous call was configured with (0: none known)
     * @param override                the cap's runtime limit set in Redis (0: none)
     */
    public record Total(int used, int limit, int waiters, int previousConfiguredLimit, int override) {

        /** @return permits of the cap free now */
        public int available() {
            return Math.max(limit - used, 0);
        }
    }

    /** @return permits free now */
    public int available() {
        return Math.max(limit - used, 0);
    }

    /** @return whether {@code limit} is a runtime limit set in Redis rather than the caller's own */
    public boolean overridden() {
        return override > 0;
    }
}
