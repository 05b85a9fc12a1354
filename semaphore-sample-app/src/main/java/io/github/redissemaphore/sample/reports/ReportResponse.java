package io.github.redissemaphore.sample.reports;

import java.time.Duration;
import java.time.Instant;

/**
 * The answer to {@code POST /reports}.
 *
 * @param id            the report
 * @param title         what was asked for
 * @param instance      the instance that served the call
 * @param waitedMillis  time from the request reaching the controller to the report starting: the wait for a permit
 * @param workedMillis  time spent generating
 */
public record ReportResponse(String id, String title, String instance, long waitedMillis, long workedMillis) {

    /** @return the answer for {@code report}, asked for at {@code receivedAt} */
    static ReportResponse of(Report report, Instant receivedAt) {
        return new ReportResponse(report.id(), report.title(), report.instance(),
                Duration.between(receivedAt, report.startedAt()).toMillis(),
                Duration.between(report.startedAt(), report.endedAt()).toMillis());
    }
}
