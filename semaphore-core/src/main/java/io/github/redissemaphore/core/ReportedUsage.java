package io.github.redissemaphore.core;

/**
 * The fleet-wide figures of a semaphore (or of the cap over all keys of a capped semaphore) as the
 * newest script reply told this JVM: every call to Redis returns them, so they cost no call of
 * their own. As fresh as this JVM's last call on it; for figures read now ask
 * {@link RedisSemaphore#state()} or {@link SemaphoreCap#state()}. Gauges read these.
 *
 * @param limit   the permits every JVM grants up to: the runtime limit when one is set in Redis,
 *                else the configured one of the call
 * @param used    permits held, across all JVMs (above {@code limit} for a while after it was lowered)
 * @param waiters callers waiting, across all JVMs
 */
public record ReportedUsage(int limit, int used, int waiters) {

    /** @return permits free: {@code limit - used}, never below 0 */
    public int available() {
        return Math.max(0, limit - used);
    }
}
