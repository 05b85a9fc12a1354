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
 * Redis, reports fired at both, exports fired at once per tenant.
 */
@RedisTest
class DemoScenarioTest {

    @Test
    void theLimitHoldsAcrossTwoInstancesAndEveryCallGetsAPermitOrA429(RedisServer redis) {
        DemoSettings settings = new DemoSettings(2, 12, 6, List.of("acme", "globex"), 3, Duration.ofMillis(500));
        LineClock printed = new LineClock();
        long startNanos = System.nanoTime();

        DemoResult result = Demo.run(settings, new PrintStream(printed, true, StandardCharsets.UTF_8),
                "--spring.data.redis.url=" + redis.uri(), "--sample.report-work=100ms", "--sample.export-work=300ms",
                // above the demo's own prefix for a run: only keys of the test's prefix on the test's Redis
                "--distributed-semaphore.key-prefix=" + redis.keyPrefix());

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
