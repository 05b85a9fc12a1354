package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Both clauses of a provider's contract, seen by an independent witness: two separate JVMs of 4
 * threads each call a semaphore of 3 permits and 5 grants per second in a loop, each call
 * reporting the wall-clock moments its work started and ended (read by the caller, not by the
 * library). Over the whole run: in every window a little shorter than rate-period (the callers
 * see their starts slightly after the server granted them: the margin, widened by this machine's
 * measured scheduling lateness) at most rate-limit starts; never more than permits calls inside at
 * once; and under the backlog the achieved rate close to the limit.
 */
@Tag("slow")
@RedisTest
class RateWitnessTest {

    private static final int PERMITS = 3;
    private static final int RATE = 5;
    private static final long PERIOD_MS = 1000;
    private static final int THREADS = 4;
    private static final int CALLS = 5;
    private static final long HOLD_MS = 50;
    /** How much later than its grant a caller may see its start, on an idle machine. */
    private static final long MARGIN_MS = 50;

    @Test
    @Timeout(180)
    void twoJvmsNeverBreakEitherClauseAndReachTheRateUnderABacklog(RedisServer server) throws Exception {
        String name = "witness-" + UUID.randomUUID().toString().substring(0, 8);
        long startAt = System.currentTimeMillis() + 6000;
        List<Process> jvms = new ArrayList<>();
        try (SchedulingNoise noise = new SchedulingNoise()) {
            long begin = System.nanoTime();
            for (int jvm = 0; jvm < 2; jvm++) {
                jvms.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                        RateCrowdProcess.class.getName(), server.host(), String.valueOf(server.port()),
                        server.keyPrefix(), name, String.valueOf(PERMITS), String.valueOf(RATE),
                        String.valueOf(PERIOD_MS), String.valueOf(THREADS), String.valueOf(CALLS),
                        String.valueOf(HOLD_MS), "60000", String.valueOf(startAt))
                        .redirectErrorStream(true).start());
            }
            List<long[]> calls = new ArrayList<>();
            for (Process jvm : jvms) {
                for (String line : outcomes(readAll(jvm))) {
                    assertThat(line).as("every call got its permit").matches("\\d+ \\d+ \\d+");
                    String[] parts = line.split(" ");
                    calls.add(new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2])});
                }
            }
            long lateMs = noise.during(begin, System.nanoTime()).toMillis();
            assertThat(calls).hasSize(2 * THREADS * CALLS);
            calls.sort((a, b) -> Long.compare(a[0], b[0]));
            // A start is seen after its grant by as long as its JVM took to get there (a JVM of its own, whose
            // stalls this one's noise probe does not see): the token is the grant's server time, on this
            // machine's clock, so each call's own delay is known, and the window less the longest of them is
            // what the starts must keep.
            long seenLateMs = calls.stream().mapToLong(call -> Math.max(0, call[0] - call[2]) / 1000).max().orElse(0);
            long windowMs = PERIOD_MS - MARGIN_MS - Math.max(lateMs, seenLateMs);
            long closestMs = Long.MAX_VALUE;
            for (int i = 0; i + RATE < calls.size(); i++) {
                long spanMs = (calls.get(i + RATE)[0] - calls.get(i)[0]) / 1000;
                closestMs = Math.min(closestMs, spanMs);
            }
            int inside = 0;
            int most = 0;
            List<long[]> edges = new ArrayList<>();
            for (long[] call : calls) {
                edges.add(new long[] {call[0], 1});
                edges.add(new long[] {call[1], -1});
            }
            // (an end before a start at the same µs: a permit handed on is not two inside)
            edges.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
            for (long[] edge : edges) {
                inside += (int) edge[1];
                most = Math.max(most, inside);
            }
            assertThat(most).as("calls inside at once").isLessThanOrEqualTo(PERMITS);
            // How late the callers saw their starts after the server granted them (the token is the grant's
            // server time in µs, on this machine's clock): printed, to tell what the margin covered.
            long[] seenLate = calls.stream().mapToLong(call -> Math.max(0, call[0] - call[2]) / 1000).sorted().toArray();
            // On the server's clock the window is exact: any rate + 1 grants span at least the period.
            List<Long> tokens = calls.stream().map(call -> call[2]).sorted().toList();
            for (int i = 0; i + RATE < tokens.size(); i++) {
                // (in whole server ms, the window's resolution)
                assertThat(tokens.get(i + RATE) / 1000 - tokens.get(i) / 1000).as("grants %s..%s by server ms", i, i + RATE)
                        .isGreaterThanOrEqualTo(PERIOD_MS);
            }
            double seconds = (calls.get(calls.size() - 1)[0] - calls.get(0)[0]) / 1e6;
            // (the first window's grants come at once: the rate is what follows them, over the time it took)
            double achieved = (calls.size() - RATE) / seconds;
            double limit = RATE * 1000.0 / PERIOD_MS;
            System.out.printf("witness: %d calls of 2 JVMs in %.2f s: %.3f starts/s against a limit of %.1f/s (%.1f %%);"
                            + " the closest %d+1 starts %d ms apart (period %d ms); at most %d inside (permits %d); starts"
                            + " seen after the grant p50 %d ms, max %d ms; %s%n",
                    calls.size(), seconds, achieved, limit, 100 * achieved / limit, RATE, closestMs, PERIOD_MS, most,
                    PERMITS, seenLate[seenLate.length / 2], seenLate[seenLate.length - 1], noise.stop());
            assertThat(closestMs).as("the closest %s+1 starts (window %s ms less %s ms margin and %s ms lateness)",
                    RATE, PERIOD_MS, MARGIN_MS, Math.max(lateMs, seenLateMs)).isGreaterThanOrEqualTo(windowMs);
            assertThat(achieved).as("the achieved rate under a backlog").isLessThanOrEqualTo(limit * 1.02)
                    .isGreaterThan(limit * 0.8);
        } finally {
            jvms.forEach(Process::destroyForcibly);
        }
    }

    private static List<String> readAll(Process process) throws Exception {
        List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lines.add(line);
            }
        }
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("the crowd process ended").isTrue();
        return lines;
    }

    /** @return the call lines of a finished process's output (log lines before them left out) */
    private static List<String> outcomes(List<String> lines) {
        int done = lines.indexOf("done");
        assertThat(done).as("the crowd process finished: %s", lines).isNotNegative();
        return lines.subList(0, done).stream().filter(line -> line.matches("\\d+ \\d+ \\d+|refused .*|error .*")).toList();
    }
}
