package io.github.redissemaphore.sample.reports;

import io.github.redissemaphore.sample.inflight.InFlightCounter;
import io.github.redissemaphore.sample.inflight.InFlightCounter.InFlight;

import java.time.Instant;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /reports?title=...} generates a report, waiting for a permit when the fleet is busy
 * (429 when none came in time); {@code GET /reports/in-flight} shows how many run fleet-wide now
 * and the most that ever ran at once.
 */
@RestController
public class ReportController {

    private final ReportService reports;
    private final InFlightCounter inFlight;

    public ReportController(ReportService reports, InFlightCounter inFlight) {
        this.reports = reports;
        this.inFlight = inFlight;
    }

    @PostMapping("/reports")
    public ReportResponse generate(@RequestParam(defaultValue = "monthly") String title) {
        // Taken before the semaphore's proxy is entered, so the difference to startedAt is the wait.
        Instant receivedAt = Instant.now();
        return ReportResponse.of(reports.generate(title), receivedAt);
    }

    @GetMapping("/reports/in-flight")
    public InFlight inFlight() {
        return inFlight.read(ReportService.SEMAPHORE);
    }
}
