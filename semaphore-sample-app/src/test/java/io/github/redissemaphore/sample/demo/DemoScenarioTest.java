package io.github.redissemaphore.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The demo's scenario, through the demo's own code, with a smaller burst: two instances on one
 * Redis, reports fired at both, and at once a flood of exports from one tenant and two from another.
 */
@RedisTest
class DemoScenarioTest {

    @Test
    void theLimitHoldsAcrossTwoInstancesAndEveryCallGetsAPermitOrA429(RedisServer redis) {
        DemoSettings settings = new DemoSettings(2, 12, 6, List.of("acme", "globex"), 6, 2, Duration.ofMillis(500));
        LineClock printed = new LineClock();
        long startNanos = System.nanoTime();

        DemoResult result = Demo.run(settings, new PrintStream(printed, true, StandardCharsets.UTF_8),
                "--spring.data.redis.url=" + redis.uri(), "--sample.report-work=100ms", "--sample.export-work=300ms",
                // above the demo's own prefix for a run: only keys of the test's prefix on the test's Redis
                "--distributed-semaphore.key-prefix=" + redis.keyPrefix());

        // (the demo's output in the test's log, as a person running it saw it)
        System.out.print(printed.toString(StandardCharsets.UTF_8));
        LimitCheck reports = result.reports();
        assertThat(reports.permits()).isEqualTo(3);
        assertThat(reports.maxInside()).as("never more reports inside than permits, and the limit was used")
                .isEqualTo(reports.permits());
        assertThat(reports.count(Outcome.SERVED)).as("reports wait for a permit, long enough for all").isEqualTo(12);

        LimitCheck exports = result.exports();
        assertThat(exports.permits()).as("per tenant").isEqualTo(2);
        assertThat(exports.maxInside()).isBetween(1L, 2L);
        assertThat(result.exportCap().permits()).as("all tenants together").isEqualTo(3);
        assertThat(result.exportCap().maxInside()).isBetween(1L, 3L);
        assertThat(exports.count(Outcome.SERVED)).as("they queue, long enough for all").isEqualTo(8);
        // acme floods and queues behind its own 2; globex is served meanwhile, never after acme's last
        TenantExports acme = result.tenants().get(0);
        TenantExports globex = result.tenants().get(1);
        assertThat(acme.tenant()).isEqualTo("acme");
        assertThat(acme.flooding()).isTrue();
        assertThat(acme.check().total()).isEqualTo(6);
        assertThat(acme.mostQueued()).as("acme's queue, as Redis showed it").isPositive();
        assertThat(globex.check().total()).isEqualTo(2);
        assertThat(globex.check().waitPercentile(100)).isLessThanOrEqualTo(acme.check().waitPercentile(100));

        assertThat(result.failedCalls()).isZero();
        assertThat(result.exitCode()).isEqualTo(DemoResult.PASSED);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("PASS", "wait p99", "acme queues ",
                "(flooding)", "acme queued behind its own 2 permits; the other tenants waited at most ");
        // The payments' two clauses, checked from what each charge reported (its start and end).
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("payments: 40 of 40 served; at most 5 inside at"
                + " once (permits 5)", "(rate-limit 10 per 1000 ms)", "both clauses held");
        // Never silent for long, however slow the machine: a person watching knows it is alive.
        assertThat(printed.longestGapMillis(startNanos)).as("longest silence of the demo, ms, in:%n%s", printed)
                .isLessThanOrEqualTo(5_000);
    }

    /** The demo's output, and the moment each of its lines ended. */
    private static final class LineClock extends ByteArrayOutputStream {

        private final List<Long> lineEnds = Collections.synchronizedList(new ArrayList<>());

        @Override
        public synchronized void write(int b) {
            super.write(b);
            if (b == '\n') {
                lineEnds.add(System.nanoTime());
            }
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) {
            for (int i = offset; i < offset + length; i++) {
                write(bytes[i]);
            }
        }

        long longestGapMillis(long startNanos) {
            long longest = 0;
            long previous = startNanos;
            for (long end : List.copyOf(lineEnds)) {
                longest = Math.max(longest, end - previous);
                previous = end;
            }
            return longest / 1_000_000;
        }
    }
}
