package io.github.redissemaphore.web;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.test.RedisServer;

import org.junit.jupiter.api.Tag;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** The 429/503 answers of a Spring MVC application, whose guarded service blocks. */
@Tag("slow")
class MvcProblemDetailsTest extends ProblemDetailsHttpTestBase {

    MvcProblemDetailsTest(RedisServer server) {
        super(server);
    }

    @Override
    WebApplicationType type() {
        return WebApplicationType.SERVLET;
    }

    @Override
    Class<?> controller() {
        return Reports.class;
    }

    @RestController
    @Import(GuardedReports.class)
    static class Reports {

        private final GuardedReports reports;

        Reports(GuardedReports reports) {
            this.reports = reports;
        }

        @GetMapping("/reports")
        String report() {
            return reports.generate();
        }

        @GetMapping("/exports/{tenant}")
        String export(@PathVariable String tenant) {
            return reports.export(tenant);
        }

        @GetMapping("/queued/{key}")
        String queued(@PathVariable String key) {
            return reports.queued(key);
        }
    }

    static class GuardedReports {

        @DistributedSemaphore(REPORTS)
        public String generate() {
            return "report";
        }

        @DistributedSemaphore(value = QUEUED, key = "#key")
        public String queued(String key) {
            return "queued for " + key;
        }

        @DistributedSemaphore(value = EXPORTS, key = "#tenant")
        public String export(String tenant) {
            return "export of " + tenant;
        }
    }
}
