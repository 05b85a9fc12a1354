package io.github.redissemaphore.sample.demo;

/** How one HTTP call of the demo ended. */
public enum Outcome {
    /** 200: the call got a permit and ran. */
    SERVED,
    /**
     * 429 at once, before any wait: the queue was full ({@code max-waiters}) or the predicted wait
     * too long, with a {@code Retry-After} computed from the predicted wait (none before the
     * semaphore measured a hold). As designed.
     */
    REFUSED,
    /** 429 after its wait ran out, naming that reason: as designed. */
    REJECTED,
    /** Anything else: an error the demo counts against the run. */
    FAILED
}
