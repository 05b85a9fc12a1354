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
 * @param replicas  how many replicas must acknowledge a grant before the caller is told of it
 *                  (Redis {@code WAIT}), 0..{@value #MAX_REPLICAS}; 0 (the default) waits for none
 * @param replicationTimeout how long a grant waits for those replicas, 1 ms..1 min (and at most
 *                  three quarters of the Redis command timeout, so the client library does not
 *                  give up on the wait first); when they do not acknowledge in time the grant is
 *                  given back and the caller gets a {@link SemaphoreUnavailableException}
 * @param totalPermits a cap over all keys of a keyed semaphore together ({@code "exports:acme"},
 *                  {@code "exports:globex"}, ... at most this many in all, each key at most
 *                  {@code permits}), taken in the same atomic step as the key's permits; 0 (the
 *                  default): no shared cap. Else {@code permits}..{@value #MAX_PERMITS}. A
 *                  semaphore with a cap is used per key only
 *                  ({@link SemaphoreRegistry#semaphore(String, String, SemaphoreSettings)}), and all its keys
 *                  live in one Redis Cluster slot
 * @param maxWaiters how many callers may wait for a permit at once, fleet-wide (per key for a
 *                  keyed or capped semaphore), checked in the same atomic step that would queue a
 *                  caller: one more is refused at once, with
 *                  {@link SemaphoreRejectedException.Reason#QUEUE_FULL}, and nothing is written. 0
 *                  (the default): no bound. Else 1..{@value #MAX_PERMITS}
 * @param rejectPredictedTimeouts true: a caller whose predicted wait (its place in the queue
 *                  times the average hold, over the permits) is already longer than the wait it
 *                  allows is refused at once, with
 *                  {@link SemaphoreRejectedException.Reason#PREDICTED_WAIT_TOO_LONG}, instead of
 *                  queueing to time out; false (the default): it waits. No prediction is made
 *                  before the semaphore has measured a hold that ended while others waited
 * @param whenUnavailable what a call does while Redis cannot be reached: fail
 *                  ({@link WhenUnavailable#REJECT}, the default), take a permit of this
 *                  instance's share ({@link WhenUnavailable#LOCAL}), or run unguarded
 *                  ({@link WhenUnavailable#ALLOW})
 * @param localPermits this instance's share of the permits while Redis cannot be reached
 *                  ({@link WhenUnavailable#LOCAL}; per key for a keyed semaphore), 1..{@code permits};
 *                  0 (the default): its part of {@code permits} among the instances Redis last
 *                  showed using the semaphore
 * @param rateLimit how many grants the semaphore makes in any window of {@code ratePeriod},
 *                  fleet-wide (per key for a keyed semaphore), on the Redis server's clock: an exact
 *                  sliding window, decided in the same atomic step as the permits (a grant takes a
 *                  permit and a slot, or neither; a release gives back the permit, never the slot).
 *                  A caller that does not wait is refused with
 *                  {@link SemaphoreRejectedException.Reason#RATE_LIMITED}; one that waits is granted
 *                  when the window frees a slot. 0 (the default): no rate. Else
 *                  1..{@value #MAX_RATE_LIMIT}; not with {@code totalPermits}
 * @param ratePeriod the window of {@code rateLimit}, {@value #MIN_RATE_PERIOD_MILLIS} ms..24 h;
 *                  {@link Duration#ZERO} without a rate (both or neither)
 */
public record SemaphoreSettings(int permits, Duration leaseTime, Duration waitTime, boolean fair, boolean autoRenew,
                                int replicas, Duration replicationTimeout, int totalPermits, int maxWaiters,
                                boolean rejectPredictedTimeouts, WhenUnavailable whenUnavailable, int localPermits,
                                int rateLimit, Duration ratePeriod) {

    /** Largest number of permits of one semaphore. */
    public static final int MAX_PERMITS = 1_000_000;
    /** Shortest lease. */
    public static final Duration MIN_LEASE_TIME = Duration.ofMillis(100);
    /** Longest lease and longest wait. */
    public static final Duration MAX_DURATION = Duration.ofHours(24);
    /** Most grants per window of a rate: the window keeps one entry per grant (about 11 bytes each in Redis). */
    public static final int MAX_RATE_LIMIT = 100_000;
    /** Shortest window of a rate, ms. */
    public static final long MIN_RATE_PERIOD_MILLIS = 100;
    /** Most replicas a grant can wait for. */
    public static final int MAX_REPLICAS = 100;
    /** How long a grant waits for its replicas unless told otherwise. */
    public static final Duration DEFAULT_REPLICATION_TIMEOUT = Duration.ofMillis(100);
    /** Longest wait for replicas. */
    public static final Duration MAX_REPLICATION_TIMEOUT = Duration.ofMinutes(1);

    /** One permit, 30 s lease, no wait, fair, renewed, no replicas waited for. */
    public static final SemaphoreSettings DEFAULTS =
            new SemaphoreSettings(1, Duration.ofSeconds(30), Duration.ZERO, true, true);

    public SemaphoreSettings {
        checkPermits(permits);
        checkLease("leaseTime", leaseTime);
        checkWait("waitTime", waitTime);
        if (replicas < 0 || replicas > MAX_REPLICAS) {
            throw new IllegalArgumentException(
                    "replicas must be between 0 and " + MAX_REPLICAS + ", but was " + replicas);
        }
        checkRange("replicationTimeout", replicationTimeout, Duration.ofMillis(1), MAX_REPLICATION_TIMEOUT);
        if (totalPermits != 0 && (totalPermits < permits || totalPermits > MAX_PERMITS)) {
            throw new IllegalArgumentException("totalPermits must be 0 (no shared cap) or between " + permits
                    + " (permits) and " + MAX_PERMITS + ", but was " + totalPermits);
        }
        if (maxWaiters < 0 || maxWaiters > MAX_PERMITS) {
            throw new IllegalArgumentException("maxWaiters must be 0 (no bound) or between 1 and " + MAX_PERMITS
                    + ", but was " + maxWaiters);
        }
        if (whenUnavailable == null) {
            throw new IllegalArgumentException("whenUnavailable must be one of reject, local, allow, but was null");
        }
        if (localPermits != 0 && (localPermits < 1 || localPermits > permits)) {
            throw new IllegalArgumentException("localPermits must be 0 (a share of the fleet) or between 1 and "
                    + permits + " (permits), but was " + localPermits);
        }
        checkRate(rateLimit, ratePeriod, totalPermits);
    }

    /** Settings that fail every call while Redis cannot be reached ({@link WhenUnavailable#REJECT}), without a rate. */
    public SemaphoreSettings(int permits, Duration leaseTime, Duration waitTime, boolean fair, boolean autoRenew,
                             int replicas, Duration replicationTimeout, int totalPermits, int maxWaiters,
                             boolean rejectPredictedTimeouts) {
        this(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout, totalPermits, maxWaiters,
                rejectPredictedTimeouts, WhenUnavailable.REJECT, 0, 0, Duration.ZERO);
    }

    /** Settings without a bound on the queue. */
    public SemaphoreSettings(int permits, Duration leaseTime, Duration waitTime, boolean fair, boolean autoRenew,
                             int replicas, Duration replicationTimeout, int totalPermits) {
        this(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout, totalPermits, 0, false);
    }

    /** Settings without a shared cap. */
    public SemaphoreSettings(int permits, Duration leaseTime, Duration waitTime, boolean fair, boolean autoRenew,
                             int replicas, Duration replicationTimeout) {
        this(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout, 0);
    }

    /** Settings that wait for no replica. */
    public SemaphoreSettings(int permits, Duration leaseTime, Duration waitTime, boolean fair, boolean autoRenew) {
        this(permits, leaseTime, waitTime, fair, autoRenew, 0, DEFAULT_REPLICATION_TIMEOUT);
    }

    /** @return these settings with another number of permits */
    public SemaphoreSettings withPermits(int permits) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return these settings with another lease time */
    public SemaphoreSettings withLeaseTime(Duration leaseTime) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return these settings with another wait time */
    public SemaphoreSettings withWaitTime(Duration waitTime) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return these settings, fair or not */
    public SemaphoreSettings withFair(boolean fair) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return these settings, renewed or not */
    public SemaphoreSettings withAutoRenew(boolean autoRenew) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /**
     * @return these settings, waiting for {@code replicas} replicas (0: none) to acknowledge every
     *         grant, at most {@code replicationTimeout}
     */
    public SemaphoreSettings withReplicas(int replicas, Duration replicationTimeout) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /**
     * @return these settings with a cap of {@code totalPermits} over all keys together (0: none)
     * @throws IllegalArgumentException unless 0 or {@code permits()}..{@value #MAX_PERMITS}
     */
    public SemaphoreSettings withTotalPermits(int totalPermits) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /**
     * @return these settings with at most {@code maxWaiters} callers waiting fleet-wide (0: no bound)
     * @throws IllegalArgumentException unless 0..{@value #MAX_PERMITS}
     */
    public SemaphoreSettings withMaxWaiters(int maxWaiters) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return these settings, refusing at once a caller predicted to wait longer than it allows, or not */
    public SemaphoreSettings withRejectPredictedTimeouts(boolean rejectPredictedTimeouts) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /**
     * @return these settings doing {@code whenUnavailable} while Redis cannot be reached, with a
     *         share of {@code localPermits} (0: its part of the fleet) when that is {@link WhenUnavailable#LOCAL}
     * @throws IllegalArgumentException unless {@code localPermits} is 0 or 1..{@code permits()}
     */
    public SemaphoreSettings withWhenUnavailable(WhenUnavailable whenUnavailable, int localPermits) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return these settings doing {@code whenUnavailable} while Redis cannot be reached, a local share taken from the fleet */
    public SemaphoreSettings withWhenUnavailable(WhenUnavailable whenUnavailable) {
        return withWhenUnavailable(whenUnavailable, localPermits);
    }

    /**
     * @return these settings with at most {@code rateLimit} grants in any window of {@code ratePeriod}
     *         ({@code 0, Duration.ZERO}: no rate)
     * @throws IllegalArgumentException unless 0..{@value #MAX_RATE_LIMIT} with a period of
     *         {@value #MIN_RATE_PERIOD_MILLIS} ms..24 h (zero with no rate), and no {@code totalPermits}
     */
    public SemaphoreSettings withRateLimit(int rateLimit, Duration ratePeriod) {
        return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout,
                totalPermits, maxWaiters, rejectPredictedTimeouts, whenUnavailable, localPermits, rateLimit,
                ratePeriod);
    }

    /** @return whether grants are limited per window of time ({@link #rateLimit()} above 0) */
    public boolean limitsRate() {
        return rateLimit > 0;
    }

    /** @return whether the queue has a bound ({@link #maxWaiters()} above 0) */
    public boolean boundsQueue() {
        return maxWaiters > 0;
    }

    /** @return whether the keys of this semaphore share a cap ({@link #totalPermits()} above 0) */
    public boolean capped() {
        return totalPermits > 0;
    }

    /** @return whether grants wait for replicas */
    public boolean waitsForReplicas() {
        return replicas > 0;
    }

    /**
     * Checks a number of permits taken by one call against these settings.
     *
     * @throws IllegalArgumentException unless {@code 1 <= requested <= permits}
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
     * @throws IllegalArgumentException unless {@code 0 <= wait <= 24 h}
     */
    public static void checkWait(String argument, Duration wait) {
        checkRange(argument, wait, Duration.ZERO, MAX_DURATION);
    }

    /**
     * Checks a lease time.
     *
     * @throws IllegalArgumentException unless {@code 100 ms <= lease <= 24 h}
     */
    public static void checkLease(String argument, Duration lease) {
        checkRange(argument, lease, MIN_LEASE_TIME, MAX_DURATION);
    }

    private static void checkRate(int rateLimit, Duration ratePeriod, int totalPermits) {
        if (rateLimit < 0 || rateLimit > MAX_RATE_LIMIT) {
            throw new IllegalArgumentException("rateLimit must be 0 (no rate) or between 1 and " + MAX_RATE_LIMIT
                    + ", but was " + rateLimit);
        }
        if (ratePeriod == null) {
            throw new IllegalArgumentException("ratePeriod must not be null (Duration.ZERO without a rateLimit)");
        }
        if (rateLimit == 0 && !ratePeriod.isZero()) {
            throw new IllegalArgumentException("ratePeriod must come with a rateLimit (both or neither), but"
                    + " ratePeriod was " + ratePeriod.toMillis() + " ms and rateLimit 0");
        }
        if (rateLimit > 0) {
            checkRange("ratePeriod", ratePeriod, Duration.ofMillis(MIN_RATE_PERIOD_MILLIS), MAX_DURATION);
            if (totalPermits > 0) {
                throw new IllegalArgumentException("rateLimit is not supported with totalPermits (a capped"
                        + " semaphore) yet: set one or the other, but was rateLimit " + rateLimit + " and totalPermits "
                        + totalPermits);
            }
        }
    }

    private static void checkPermits(int permits) {
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException(
                    "permits must be between 1 and " + MAX_PERMITS + ", but was " + permits);
        }
    }

    private static void checkRange(String argument, Duration value, Duration min, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(argument + " must not be null");
        }
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(argument + " must be between " + min.toMillis() + " ms and "
                    + describe(max) + ", but was " + value.toMillis() + " ms");
        }
    }

    private static String describe(Duration max) {
        return max.equals(MAX_DURATION) ? "24 h (" + MAX_DURATION.toMillis() + " ms)" : max.toMillis() + " ms";
    }
}
