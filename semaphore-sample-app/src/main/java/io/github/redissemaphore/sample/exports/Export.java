package io.github.redissemaphore.sample.exports;

import java.time.Instant;

/**
 * A finished export of one tenant's data.
 *
 * @param id        unique per export
 * @param tenant    whose data
 * @param instance  the instance that ran it
 * @param startedAt when it began
 * @param endedAt   when it was done
 */
public record Export(String id, String tenant, String instance, Instant startedAt, Instant endedAt) {
}
