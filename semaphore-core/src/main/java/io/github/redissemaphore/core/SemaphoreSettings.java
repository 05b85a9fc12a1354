package io.github.redissemaphore.core;

import java.time.Duration;

/**
 * How one semaphore behaves. Every value is checked when the record is made, so an invalid
 * setting never reaches Redis.
 *
 * @param permits   how many permits exist fleet-wide, 1..1,000,000
 * @param leaseTime how long a permit lives without renewal, 100 ms..24 h
 * @param waitTime  how long {@link RedisSemaphore#acquire()} waits, 0..24 h
 * @param fair      true: strict arrival order, nobody jumps the queue; false: free permits are
 *                  taken even while others wait
 * @param autoRenew true: held permits are renewed every leaseTime/3 for as long as they are held
 */
public record SemaphoreSettings(int permits, Duration leaseTime, Duration waitTime, boolean fair, boolean autoRenew) {

    /** Largest number of permits of one semaphore. */
    public static final int MAX_PERMITS = 1_000_000;
    /** Shortest lease. */
    public static final Duration MIN_LEASE_TIME = Duration.ofMillis(100);
    /** Longest lease and longest wait. */
    public static final Duration MAX_DURATION = Duration.ofHours(24);

    /** One permit, 30 s lease, no wait, fair, renewed. */
    public static final SemaphoreSettings DEFAULTS =
            new SemaphoreSettings(1, Duration.ofSeconds(30), Duration.ZERO, true, true);

    public SemaphoreSettings {
        checkPermits(permits);
        checkRange("leaseTime", leaseTime, MIN_LEASE_TIME);
        checkWait("waitTime", waitTime);
    }

    /** @return these settings with another number of permits */
    public SemaphoreSettings withPermits(int permits) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew);
    }

    /** @return these settings with another lease time */
    public SemaphoreSettings withLeaseTime(Duration leaseTime) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew);
    }

    /** @return these settings with another wait time */
    public SemaphoreSettings withWaitTime(Duration waitTime) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew);
    }

    /** @return these settings, fair or not */
    public SemaphoreSettings withFair(boolean fair) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew);
    }

    /** @return these settings, renewed or not */
    public SemaphoreSettings withAutoRenew(boolean autoRenew) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew);
    }

    /**
     * Checks a number of permits taken by one call against these settings.
     *
     * @throws IllegalArgumentException unless 1 <= requested <= permits
     */
    public void checkRequest(int requested) {
        if (requested < 1 || requested > permits) {
            throw new IllegalArgumentException("permits must be between 1 and " + permits
                    + " (the semaphore's permits), but was " + requested);
        }
    }

    /**
     * Checks a wait duration.
     *
     * @throws IllegalArgumentException unless 0 <= wait <= 24 h
     */
    public static void checkWait(String argument, Duration wait) {
        checkRange(argument, wait, Duration.ZERO);
    }

    private static void checkPermits(int permits) {
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException(
                    "permits must be between 1 and " + MAX_PERMITS + ", but was " + permits);
        }
    }

    private static void checkRange(String argument, Duration value, Duration min) {
        if (value == null) {
            throw new IllegalArgumentException(argument + " must not be null");
        }
        if (value.compareTo(min) < 0 || value.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(argument + " must be between " + min.toMillis() + " ms and 24 h ("
                    + MAX_DURATION.toMillis() + " ms), but was " + value.toMillis() + " ms");
        }
    }
}
