package io.github.redissemaphore.sample.reports;

import java.time.Instant;

/**
 * A generated report.
 *
 * @param id        unique per report
 * @param title     what was asked for
 * @param instance  the instance that generated it
 * @param startedAt when generation began, i.e. once a permit was had
 * @param endedAt   when it was done
 */
public record Report(String id, String title, String instance, Instant startedAt, Instant endedAt) {
}
