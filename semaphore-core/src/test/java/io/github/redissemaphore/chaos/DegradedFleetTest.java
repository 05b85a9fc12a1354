package io.github.redissemaphore.chaos;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.TcpProxy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code when-unavailable: local} across a fleet of separate JVMs ({@link DegradedWorker}), with an
 * independent {@link Witness} (a second Redis, never faulted) counting the calls inside. Under
 * steady load the semaphore's Redis is SIGKILLed, kept down for 5 s and started again, empty or
 * with its data (AOF): the witness never counts more than the permits inside, during the outage
 * or after; calls are served during it, decided in milliseconds; the permits granted locally and
 * still held show in Redis after recovery (as holders whose owner is the library's thread that
 * wrote them back) and drain. A partition of one instance, while the other still reaches Redis,
 * is bounded by the cut-off instance's share plus the permits (docs/guarantees.md).
 * Prints its figures as {@code DegradedFleetTest figures: ...}.
 */
@Tag("slow")
@RedisTest
class DegradedFleetTest {

    private static final int PERMITS = 4;
    private static final int WORKERS = 2;
    private static final int THREADS = 4;
    private static final long LEASE_MS = 3000;
    /**
     * The library's default: a shorter one lets a loaded machine's late replies look like an outage
     * to one instance, which is a partition, whose bound is another.
     */
    private static final long TIMEOUT_MS = 2000;
    private static final long WAIT_MS = 1000;
    private static final String NAME = "fleet";

    /** A worker JVM and what it printed. */
    private record Worker(Process process, List<String> lines) {
    }

    @Test
    void aFleetNeverRunsMoreThanItsPermitsWhenRedisRestartsEmpty(@Dedicated RedisServer server,
                                                                 @Dedicated RedisServer witnessServer,
                                                                 @TempDir Path dir) throws Exception {
        outage(server, witnessServer, dir, "empty");
    }

    @Test
    void aFleetNeverRunsMoreThanItsPermitsWhenRedisRestartsWithItsData(@Dedicated RedisServer witnessServer,
                                                                       @TempDir Path dir) throws Exception {
        try (RedisServer server = RedisServers.start(List.of("--appendonly", "yes", "--appendfsync", "always"))) {
            outage(server, witnessServer, dir, "with its data");
        }
    }

    private void outage(RedisServer server, RedisServer witnessServer, Path dir, String restart) throws Exception {
        StringRedisTemplate witnessRedis = template(witnessServer);
        Witness witness = new Witness(witnessRedis, PERMITS, PERMITS);
        List<Worker> workers = startFleet(server.port(), server.port(), witnessServer.port(), dir);
        try (Observer observer = new Observer(server)) {
            awaitFleetSeen(server);
            Thread.sleep(2000);
            long killedAt = System.currentTimeMillis();
            server.kill();
            Thread.sleep(5000);
            long upAt = System.currentTimeMillis();
            server.start();
            long writtenBackSeenAt = observer.awaitWrittenBack(Duration.ofSeconds(15));
            Thread.sleep(3000);
            Map<String, Long> totals = stop(workers, dir);

            assertThat(witness.over()).as("enters above the permits").isEmpty();
            assertThat(witness.max()).isLessThanOrEqualTo(PERMITS);
            assertThat(totals.get("local")).as("calls served locally during the outage").isPositive();
            assertThat(totals.get("errors")).isZero();
            long redisAgainAt = workers.stream().flatMap(w -> w.lines().stream())
                    .filter(line -> line.startsWith("redis-again ")).mapToLong(line -> Long.parseLong(line.substring(12)))
                    .filter(at -> at >= upAt).min().orElseThrow();
            // Drained: after the workers stopped, nothing is held.
            await().atMost(Duration.ofSeconds(10)).until(() -> observer.state().used() == 0);
            System.out.printf("DegradedFleetTest figures (restart %s): %d workers x %d threads, %d permits; witness"
                            + " max inside %d; served through Redis %d, locally %d (refused locally %d); slowest local"
                            + " decision %.1f ms over %d probes; outage %d ms; Redis answering to the first grant"
                            + " through it %d ms; to the first permit granted locally seen in Redis %d ms%n",
                    restart, WORKERS, THREADS, PERMITS, witness.max(), totals.get("throughRedis"), totals.get("local"),
                    totals.get("refusedLocally"), totals.get("slowestProbeMicros") / 1000.0, totals.get("probes"),
                    upAt - killedAt, redisAgainAt - upAt, writtenBackSeenAt - upAt);
            assertThat(totals.get("slowestProbeMicros")).as("the slowest decision while degraded, µs")
                    .isLessThan(TIMEOUT_MS * 1000);
            assertThat(redisAgainAt - upAt).as("from Redis answering to the first grant through it, ms")
                    .isLessThan(10_000);
        } finally {
            workers.forEach(w -> w.process().destroyForcibly());
        }
    }

    @Test
    void aPartitionedInstanceRunsItsShareOnTopOfWhatRedisGrantsTheOthers(@Dedicated RedisServer server,
                                                                         @Dedicated RedisServer witnessServer,
                                                                         @TempDir Path dir) throws Exception {
        StringRedisTemplate witnessRedis = template(witnessServer);
        Witness witness = new Witness(witnessRedis, PERMITS, PERMITS);
        try (TcpProxy proxy = TcpProxy.to(server)) {
            List<Worker> workers = startFleet(proxy.port(), server.port(), witnessServer.port(), dir);
            try {
                awaitFleetSeen(server);
                Thread.sleep(2000);
                long cutAt = System.currentTimeMillis();
                proxy.partition();
                Thread.sleep(5000);
                proxy.heal();
                long healedAt = System.currentTimeMillis();
                Thread.sleep(4000);
                Map<String, Long> totals = stop(workers, dir);

                // The cut-off instance's share (2 of 4 between two) on top of the permits Redis grants the other.
                int share = PERMITS / WORKERS;
                assertThat(witness.max()).isLessThanOrEqualTo(PERMITS + share);
                // Above the permits only while cut off, and until it settled back (probe, settle, a lease
                // of its Redis permits given up late): never after.
                long until = healedAt + 1000 + 1200 + LEASE_MS;
                assertThat(witness.over()).allSatisfy(over -> assertThat(over.atMs()).isBetween(cutAt, until));
                assertThat(totals.get("local")).isPositive();
                System.out.printf("DegradedFleetTest figures (partition of one of %d instances for 5 s): witness max"
                        + " inside %d (bound %d + %d), enters above %d: %d%n", WORKERS, witness.max(), PERMITS, share,
                        PERMITS, witness.over().size());
            } finally {
                workers.forEach(w -> w.process().destroyForcibly());
            }
        }
    }

    private static StringRedisTemplate template(RedisServer server) {
        LettuceConnectionFactory factory = server.connectionFactory();
        return new StringRedisTemplate(factory);
    }

    /** Worker 0 reaches Redis on {@code firstPort} (a proxy, or Redis itself), the others on {@code port}. */
    private List<Worker> startFleet(int firstPort, int port, int witnessPort, Path dir) throws IOException {
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), DegradedWorker.class.getName(),
                    dir.toString(), "w" + i, "127.0.0.1", String.valueOf(i == 0 ? firstPort : port),
                    String.valueOf(witnessPort), String.valueOf(PERMITS), String.valueOf(LEASE_MS),
                    String.valueOf(THREADS), String.valueOf(42 + i), String.valueOf(TIMEOUT_MS),
                    String.valueOf(WAIT_MS), NAME)
                    .redirectErrorStream(true).start();
            List<String> lines = new CopyOnWriteArrayList<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        lines.add(line);
                        if (line.contains("WARN") || line.contains("INFO  [semaphore") || line.startsWith("summary")
                                || line.contains("Exception") || Boolean.getBoolean("fleet.all")) {
                            System.out.println("[w" + workers.size() + "] " + line);
                        }
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
            workers.add(new Worker(process, lines));
        }
        return workers;
    }

    /** Both instances recorded themselves: each takes its share by rank among them. */
    private static void awaitFleetSeen(RedisServer server) {
        await().atMost(Duration.ofSeconds(30)).until(
                () -> server.adminCommand("ZCARD", "semaphore:{" + NAME + "}:instances"),
                n -> Long.valueOf(WORKERS).equals(n));
    }

    /** Stops the workers and sums their summaries. */
    private static Map<String, Long> stop(List<Worker> workers, Path dir) throws Exception {
        Files.createFile(dir.resolve("stop"));
        Map<String, Long> totals = new HashMap<>();
        for (Worker worker : workers) {
            assertThat(worker.process().waitFor(30, TimeUnit.SECONDS)).as("a worker stops").isTrue();
            String summary = worker.lines().stream().filter(line -> line.startsWith("summary ")).findFirst()
                    .orElseThrow(() -> new AssertionError("no summary: " + worker.lines()));
            for (String pair : summary.substring(8).split(" ")) {
                String[] kv = pair.split("=");
                long value = Long.parseLong(kv[1]);
                totals.merge(kv[0], value, kv[0].startsWith("slowest") ? Math::max : Long::sum);
            }
        }
        return totals;
    }

    /** Reads the semaphore's state from outside the fleet. */
    private static final class Observer implements AutoCloseable {

        private final LettuceConnectionFactory factory;
        private final SemaphoreRegistry registry;
        private final RedisSemaphore semaphore;

        Observer(RedisServer server) {
            factory = server.connectionFactory(Duration.ofSeconds(1));
            registry = SemaphoreRegistry.builder(factory).build();
            semaphore = registry.semaphore(NAME, SemaphoreSettings.DEFAULTS.withPermits(PERMITS)
                    .withLeaseTime(Duration.ofMillis(LEASE_MS)));
        }

        SemaphoreState state() {
            return semaphore.state();
        }

        /** @return when a holder written back by a library thread was first seen */
        long awaitWrittenBack(Duration within) {
            AtomicLong seenAt = new AtomicLong();
            await().atMost(within).pollInterval(Duration.ofMillis(20)).ignoreExceptions().until(() -> {
                boolean seen = state().holders().stream().anyMatch(h -> h.owner().contains("semaphore-callback"));
                if (seen) {
                    seenAt.set(System.currentTimeMillis());
                }
                return seen;
            });
            return seenAt.get();
        }

        @Override
        public void close() {
            registry.close();
            factory.destroy();
        }
    }
}
