package io.github.redissemaphore.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The demo's scenario, through the demo's own code, with a smaller burst: two instances on one
 * Redis, reports fired at both, exports fired at once per tenant.
 */
@RedisTest
class DemoScenarioTest {

    @Test
    void theLimitHoldsAcrossTwoInstancesAndEveryCallGetsAPermitOrA429(RedisServer redis) {
        DemoSettings settings = new DemoSettings(2, 12, 6, List.of("acme", "globex"), 3, Duration.ofMillis(500));
        ByteArrayOutputStream printed = new ByteArrayOutputStream();

        DemoResult result = Demo.run(settings, new PrintStream(printed, true, StandardCharsets.UTF_8),
                "--spring.data.redis.url=" + redis.uri(), "--sample.report-work=100ms", "--sample.export-work=300ms");

        LimitCheck reports = result.reports();
        assertThat(reports.permits()).isEqualTo(3);
        assertThat(reports.maxInside()).as("never more reports inside than permits, and the limit was used")
                .isEqualTo(reports.permits());
        assertThat(reports.count(Outcome.SERVED)).as("reports wait for a permit, long enough for all").isEqualTo(12);

        LimitCheck exports = result.exports();
        assertThat(exports.permits()).isEqualTo(1);
        assertThat(exports.maxInside()).isEqualTo(1);
        assertThat(exports.count(Outcome.SERVED)).as("at least the first export of each tenant").isGreaterThanOrEqualTo(2);
        assertThat(exports.count(Outcome.SERVED) + exports.count(Outcome.REJECTED)).isEqualTo(6);

        assertThat(result.failedCalls()).isZero();
        assertThat(result.exitCode()).isEqualTo(DemoResult.PASSED);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("PASS", "wait p99");
    }
}
