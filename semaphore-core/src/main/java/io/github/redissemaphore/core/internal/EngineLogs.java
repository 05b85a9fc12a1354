package io.github.redissemaphore.core.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log categories of the engine, by name: every piece of a semaphore logs under
 * {@code DefaultRedisSemaphore}'s (one category for a semaphore's messages), a lease under
 * {@code DefaultPermit}'s, without the pieces referring to those classes.
 */
final class EngineLogs {

    /** A semaphore's messages, from whichever of its pieces. */
    static final Logger SEMAPHORE =
            LoggerFactory.getLogger("io.github.redissemaphore.core.internal.DefaultRedisSemaphore");
    /** A lease's messages: lost, handed over. */
    static final Logger LEASE = LoggerFactory.getLogger("io.github.redissemaphore.core.internal.DefaultPermit");

    private EngineLogs() {
    }
}
