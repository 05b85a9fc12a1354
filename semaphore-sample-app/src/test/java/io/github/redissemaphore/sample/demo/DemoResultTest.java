package io.github.redissemaphore.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The demo's verdict: its exit status is what a script or CI relies on. */
class DemoResultTest {

    private static final List<Call> SERVED_AND_REJECTED = List.of(Call.served(10), Call.served(30), Call.rejected());

    @Test
    void passesWhenEveryLimitHeldAndEveryCallGotAPermitOrA429() {
        DemoResult result = result(new LimitCheck("reports", 3, 3, SERVED_AND_REJECTED));
        assertThat(result.exitCode()).isEqualTo(DemoResult.PASSED);
        assertThat(result.table()).contains("PASS");
    }

    @Test
    void failsWithItsOwnStatusWhenMoreCallsRanThanPermits() {
        DemoResult result = result(new LimitCheck("reports", 3, 4, SERVED_AND_REJECTED));
        assertThat(result.exitCode()).isEqualTo(DemoResult.LIMIT_EXCEEDED);
        assertThat(result.table()).contains("FAIL", "reports had 4 inside for 3 permits");
    }

    @Test
    void failsWhenACallGotNeitherAPermitNorA429() {
        DemoResult result = result(new LimitCheck("reports", 3, 3, List.of(Call.served(5), Call.failed("HTTP 500"))));
        assertThat(result.exitCode()).isEqualTo(DemoResult.CALLS_FAILED);
        assertThat(result.table()).contains("FAIL", "HTTP 500");
    }

    @Test
    void waitPercentilesAreOverServedCallsByNearestRank() {
        LimitCheck check = new LimitCheck("reports", 3, 3, SERVED_AND_REJECTED);
        assertThat(check.waitPercentile(50)).isEqualTo(10);
        assertThat(check.waitPercentile(99)).isEqualTo(30);
    }

    private static DemoResult result(LimitCheck reports) {
        LimitCheck exports = new LimitCheck("exports:*", 1, 1, List.of(Call.served(0), Call.rejected()));
        return new DemoResult("redis://test", 2, reports, exports, Duration.ofSeconds(1));
    }
}
