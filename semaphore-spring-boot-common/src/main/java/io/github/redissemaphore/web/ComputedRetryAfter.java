package io.github.redissemaphore.web;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongUnaryOperator;

/**
 * The {@code Retry-After} of a 429 when the application configured none: the wait the semaphore
 * predicted for the refused caller ({@code SemaphoreRejectedException.retryAfter()}), capped at
 * {@link #CAP}, plus a random jitter of up to a tenth of it and at least up to a second, in whole
 * seconds rounded up: 1 to 66.
 *
 * <p>The cap: a prediction is a queue position times an average hold, and the further ahead it
 * looks the more it is off (holds change, waiters leave, the limit may be raised); a client sent
 * back within a minute gets a fresh figure then, and a burst that passes does not keep clients
 * away for long. The jitter: the callers a full queue refuses together learn nearly the same
 * prediction, and would all come back in the same second to find the queue full again; spread
 * over a tenth of the wait (a whole second at least, the header's grain) they come back a few at
 * a time.
 */
final class ComputedRetryAfter {

    /** The longest wait advised, before the jitter. */
    static final Duration CAP = Duration.ofSeconds(60);

    /** The least spread of the jitter: less would vanish in the rounding to whole seconds. */
    private static final long LEAST_SPREAD_MILLIS = 1000;

    /** Given n, a random number from 0 to n - 1: the jitter's source. */
    private final LongUnaryOperator randomBelow;

    /** With a jitter drawn on the calling thread's {@link ThreadLocalRandom}. */
    ComputedRetryAfter() {
        this(bound -> ThreadLocalRandom.current().nextLong(bound));
    }

    /** @param randomBelow given n, a number from 0 to n - 1: a test's fixed jitter */
    ComputedRetryAfter(LongUnaryOperator randomBelow) {
        this.randomBelow = randomBelow;
    }

    /** @return the header's value for a caller predicted to wait {@code predicted}: whole seconds, at least 1 */
    String seconds(Duration predicted) {
        long capped = Math.min(Math.max(predicted.toMillis(), 0), CAP.toMillis());
        long spread = Math.max(LEAST_SPREAD_MILLIS, capped / 10);
        return inWholeSeconds(Duration.ofMillis(capped + randomBelow.applyAsLong(spread + 1)));
    }

    /**
     * @return {@code wait} as the header writes it, computed or configured: whole seconds, rounded
     *         up (a client back a little late finds the permit free, one back early does not), at least 1
     */
    static String inWholeSeconds(Duration wait) {
        return String.valueOf(Math.max(1, (wait.toMillis() + 999) / 1000));
    }
}
