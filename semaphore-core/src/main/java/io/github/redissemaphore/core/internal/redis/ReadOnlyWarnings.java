package io.github.redissemaphore.core.internal.redis;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says that the library's connection talked to a demoted master ({@code READONLY}) and was
 * dropped: at WARN at most once per {@link #PERIOD} (a misconfigured address, naming a replica,
 * would repeat it at every connection), at DEBUG in between.
 */
final class ReadOnlyWarnings {

    /** No such moment: a System.nanoTime() that never occurs in practice. */
    private static final long NONE = AnswerTracker.NONE;
    /** At most one WARN of a demoted master per this period. */
    private static final Duration PERIOD = Duration.ofSeconds(30);
    /** The connection's category, which users configure for what the library's connection does. */
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    /** System.nanoTime() of the last WARN of a demoted master, or NONE. */
    private volatile long lastWarnNanos = NONE;

    /** The connection to a demoted master was dropped. */
    void dropped() {
        long now = System.nanoTime();
        long last = lastWarnNanos;
        boolean warn = last == NONE || now - last > PERIOD.toNanos();
        lastWarnNanos = now;
        String message = "Redis refused a write of the semaphores with READONLY: the server they were connected"
                + " to is a replica now (a failover demoted it, or the address names a replica); connecting to"
                + " the master now, and sending the refused calls again there";
        if (warn) {
            log.warn(message);
        } else {
            log.debug(message);
        }
    }
}
