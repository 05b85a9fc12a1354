package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * No permit could be had: the wait ran out, or the caller was refused at once because the queue
 * was full or its predicted wait was longer than it allowed ({@link #reason()}). Where the
 * semaphore could predict how long a caller would wait, {@link #retryAfter()} says it.
 */
public class SemaphoreRejectedException extends SemaphoreException {

    private static final long serialVersionUID = 1L;

    /** Why a call got no permit: a low-cardinality value, fit for a metric tag. */
    public enum Reason {
        /** it waited as long as it allowed (or did not wait) and no permit came */
        WAIT_TIMED_OUT,
        /** refused at once: as many callers as {@link SemaphoreSettings#maxWaiters()} waited already */
        QUEUE_FULL,
        /**
         * refused at once: its predicted wait was longer than it allowed
         * ({@link SemaphoreSettings#rejectPredictedTimeouts()})
         */
        PREDICTED_WAIT_TOO_LONG,
        /**
         * decided by this instance alone, Redis being unreachable ({@link WhenUnavailable#LOCAL}):
         * its share of the permits stayed in use for as long as the caller allowed
         */
        LOCAL_SHARE_IN_USE,
        /**
         * refused at once: as many grants as {@link SemaphoreSettings#rateLimit()} were made in the
         * last {@link SemaphoreSettings#ratePeriod()}; {@link #retryAfter()} is when the window frees a slot
         */
        RATE_LIMITED;

        /** @return the name in lower case with dashes, as metrics tags and problem details show it */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    private final String semaphoreName;
    private final int requestedPermits;
    private final Duration waited;
    private final Reason reason;
    private final @Nullable Duration retryAfter;

    /** The wait ran out: {@link Reason#WAIT_TIMED_OUT}, no prediction. */
    public SemaphoreRejectedException(String semaphoreName, int requestedPermits, Duration waited) {
        this(semaphoreName, requestedPermits, waited, Reason.WAIT_TIMED_OUT, null,
                "within " + waited.toMillis() + " ms");
    }

    /**
     * @param waited     how long the caller was allowed to wait
     * @param retryAfter the wait predicted for the caller when it was refused, or null when none is known
     * @param why        what refused it, in words ("queue full: 3 of 3 waiting")
     */
    public SemaphoreRejectedException(String semaphoreName, int requestedPermits, Duration waited, Reason reason,
                                      @Nullable Duration retryAfter, String why) {
        super("No permit of semaphore '" + semaphoreName + "' for " + requestedPermits + " permit(s) " + why
                + (retryAfter == null || reason == Reason.WAIT_TIMED_OUT ? ""
                        : " (predicted wait " + retryAfter.toMillis() + " ms)"));
        this.semaphoreName = semaphoreName;
        this.requestedPermits = requestedPermits;
        this.waited = waited;
        this.reason = reason;
        this.retryAfter = retryAfter;
    }

    /** @return the semaphore that refused */
    public String getSemaphoreName() {
        return semaphoreName;
    }

    /** @return how many permits were asked for */
    public int getRequestedPermits() {
        return requestedPermits;
    }

    /** @return how long the caller was allowed to wait */
    public Duration getWaited() {
        return waited;
    }

    /** @return why the call got no permit */
    public Reason reason() {
        return reason;
    }

    /**
     * @return how long the caller would have waited, as the semaphore predicted it when it refused
     *         (its place at the back of the queue times the average hold, over the permits):
     *         when to try again. Empty when no prediction was known (no hold measured yet, or
     *         a wait that ran out)
     */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
