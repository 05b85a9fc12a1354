package io.github.redissemaphore.sample.demo;

/** How one HTTP call of the demo ended. */
public enum Outcome {
    /** 200: the call got a permit and ran. */
    SERVED,
    /** 429 with a Retry-After header: refused by the semaphore, as designed. */
    REJECTED,
    /** Anything else: an error the demo counts against the run. */
    FAILED
}
