package io.github.redissemaphore.sample.boot3;

import io.github.redissemaphore.annotation.DistributedSemaphore;

import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A service as a Boot 3.5 application writes it: reports limited to
 * {@code distributed-semaphore.semaphores.reports.permits} at once across every instance.
 */
@SpringBootApplication
public class ReportsApplication {

    /** Calls inside a report right now, in this JVM: both instances of the demo run in it. */
    static final AtomicInteger INSIDE = new AtomicInteger();
    /** The most calls ever inside at once. */
    static final AtomicInteger MOST_INSIDE = new AtomicInteger();

    /** The guarded work: a report that takes a moment. */
    @Service
    public static class Reports {

        /** @return the report, after 300 ms of work while holding a permit */
        @DistributedSemaphore("reports")
        public String generate() throws InterruptedException {
            MOST_INSIDE.accumulateAndGet(INSIDE.incrementAndGet(), Math::max);
            try {
                Thread.sleep(300);
                return "report";
            } finally {
                INSIDE.decrementAndGet();
            }
        }
    }

    /** {@code GET /reports}: 200 with a report, or the starter's 429 problem when no permit is free. */
    @RestController
    public static class ReportsController {

        private final Reports reports;

        public ReportsController(Reports reports) {
            this.reports = reports;
        }

        /** @return the report */
        @GetMapping("/reports")
        public String reports() throws InterruptedException {
            return reports.generate();
        }
    }
}
