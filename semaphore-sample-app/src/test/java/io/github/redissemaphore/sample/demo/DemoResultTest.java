package io.github.redissemaphore.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

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
    void callsRefusedAtOnceAreCountedWithWhatRetryAfterEachWasTold() {
        List<Call> calls = List.of(Call.served(10), Call.refused("queue-full", null), Call.refused("queue-full", 2),
                Call.refused("queue-full", 1), Call.refused("queue-full", 2), Call.rejected());
        DemoResult result = result(new LimitCheck("reports", 3, 3, calls));
        assertThat(result.exitCode()).as("a refusal is as designed").isEqualTo(DemoResult.PASSED);
        assertThat(result.table()).contains("  reports: 4 refused at once (429 queue-full), told Retry-After 1 s (1), "
                + "2 s (2), 1 before any hold was measured: no Retry-After");
        assertThat(result.reports().retryAfters()).containsExactly(entry(1, 1L), entry(2, 2L));
    }

    @Test
    void waitPercentilesAreOverServedCallsByNearestRank() {
        LimitCheck check = new LimitCheck("reports", 3, 3, SERVED_AND_REJECTED);
        assertThat(check.waitPercentile(50)).isEqualTo(10);
        assertThat(check.waitPercentile(99)).isEqualTo(30);
    }

    @Test
    void theCapsLimitCountsAndEachTenantGetsALineWithItsQueueAndWaits() {
        List<Call> acme = List.of(Call.served(0), Call.served(900), Call.served(1800));
        List<Call> globex = List.of(Call.served(0), Call.served(450));
        TenantExports flooding = new TenantExports(new LimitCheck("exports:acme", 2, 2, acme), 1, true);
        TenantExports small = new TenantExports(new LimitCheck("exports:globex", 2, 1, globex), 0, false);
        List<Call> all = List.of(acme.get(0), acme.get(1), acme.get(2), globex.get(0), globex.get(1));
        DemoResult exceeded = new DemoResult("redis://test", 2, new LimitCheck("reports", 3, 3, SERVED_AND_REJECTED),
                new LimitCheck("exports:*", 2, 2, all), new LimitCheck("exports", 3, 4, all),
                List.of(flooding, small), Duration.ofSeconds(1));

        assertThat(exceeded.exitCode()).isEqualTo(DemoResult.LIMIT_EXCEEDED);
        assertThat(exceeded.failedCalls()).isZero();
        assertThat(exceeded.table()).contains("exports had 4 inside for 3 permits",
                "acme       3 at once, up to  1 queued:  3 served,  0 rejected, wait p50   900 ms, p99  1800 ms"
                        + "  (flooding)",
                "globex     2 at once",
                "acme queued behind its own 2 permits; the other tenants waited at most 450 ms (acme up to 1800 ms)");
    }

    private static DemoResult result(LimitCheck reports) {
        List<Call> calls = List.of(Call.served(0), Call.rejected());
        return new DemoResult("redis://test", 2, reports, new LimitCheck("exports:*", 2, 1, calls),
                new LimitCheck("exports", 3, 1, calls), List.of(), Duration.ofSeconds(1));
    }
}
