package io.github.redissemaphore.web;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.test.RedisServer;

import org.junit.jupiter.api.Tag;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** The 429/503 answers of a WebFlux application, whose guarded service answers with a {@link Mono}. */
@Tag("slow")
class WebFluxProblemDetailsTest extends ProblemDetailsHttpTestBase {

    WebFluxProblemDetailsTest(RedisServer server) {
        super(server);
    }

    @Override
    WebApplicationType type() {
        return WebApplicationType.REACTIVE;
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
        Mono<String> report() {
            return reports.generate();
        }

        @GetMapping("/exports/{tenant}")
        Mono<String> export(@PathVariable String tenant) {
            return reports.export(tenant);
        }

        @GetMapping("/queued/{key}")
        Mono<String> queued(@PathVariable String key) {
            return reports.queued(key);
        }
    }

    static class GuardedReports {

        @DistributedSemaphore(REPORTS)
        public Mono<String> generate() {
            return Mono.just("report");
        }

        @DistributedSemaphore(value = QUEUED, key = "#key")
        public Mono<String> queued(String key) {
            return Mono.fromSupplier(() -> "queued for " + key);
        }

        @DistributedSemaphore(value = EXPORTS, key = "#tenant")
        public Mono<String> export(String tenant) {
            return Mono.fromSupplier(() -> "export of " + tenant);
        }
    }
}
