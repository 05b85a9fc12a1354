package io.github.redissemaphore.bench;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Compares the semaphore with Redisson's {@code RPermitExpirableSemaphore} and {@code RSemaphore}
 * and with the raw EVALSHA floor, in one run against one Redis, and prints one table per measure:
 * {@link Throughput}, {@link HandOff}, {@link IdleWaiters}, {@link HolderScaling}, {@link Renewal}, and
 * {@link RedisCost}, which runs on a {@code redis-server} of its own under valgrind.
 *
 * <p>Run from the repository root:
 * {@code ./mvnw -B -q -Pbenchmark -pl semaphore-benchmark -am -DskipTests package}; options are the
 * {@code bench.*} system properties of {@link BenchmarkOptions}. It starts a {@code redis-server} of
 * its own (from the PATH, else the one of the embedded-redis jar), or uses {@code REDIS_URL}; it
 * does not use Docker, whose port forwarding would add to every round trip.
 */
public final class SemaphoreBenchmark {

    /** Ours and Redisson's expirable semaphore both lease permits for this long here. */
    private static final Duration LEASE = Duration.ofSeconds(30);

    private SemaphoreBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        // The test-jar brings the tests' logback-test.xml, which logs at INFO; ours logs warnings only.
        System.setProperty("logback.configurationFile", "benchmark-logback.xml");
        BenchmarkOptions options = BenchmarkOptions.fromSystemProperties();
        Deque<AutoCloseable> toClose = new ArrayDeque<>();
        try {
            run(options, toClose);
        } finally {
            // Clients before the server, each even if another fails to close.
            while (!toClose.isEmpty()) {
                try {
                    toClose.pop().close();
                } catch (Exception e) {
                    System.err.println("could not close: " + e);
                }
            }
        }
    }

    private static void run(BenchmarkOptions options, Deque<AutoCloseable> toClose) throws Exception {
        String url = System.getenv("REDIS_URL");
        RedisServer server = url == null || url.isBlank() ? RedisServers.start() : RedisServers.open();
        toClose.push(server);
        RedisClient lettuce = RedisClient.create(RedisURI.create(server.uri()));
        toClose.push(lettuce::shutdown);
        RedisStats stats = new RedisStats(lettuce, server.host(), server.port());
        toClose.push(stats);
        StatefulRedisConnection<String, String> floorConnection = lettuce.connect();
        toClose.push(floorConnection);

        // Two of each kind of client: holder and waiter of the hand-off measures are two JVMs.
        RedisConnectionFactory oursFactory = server.connectionFactory();
        RedisConnectionFactory oursPeerFactory = server.connectionFactory();
        SemaphoreRegistry registry = SemaphoreRegistry.builder(oursFactory).build();
        toClose.push(registry);
        SemaphoreRegistry peerRegistry = SemaphoreRegistry.builder(oursPeerFactory).build();
        toClose.push(peerRegistry);
        RedissonClient redisson = redisson(server.uri(), options.redissonPool());
        toClose.push(redisson::shutdown);
        RedissonClient redissonPeer = redisson(server.uri(), 8);
        toClose.push(redissonPeer::shutdown);
        // Redisson's semaphores are keys without expiry: leave none behind on a REDIS_URL server.
        toClose.push(() -> redisson.getKeys().deleteByPattern("bench-*"));

        Contender ours = Contender.ours(registry, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE));
        Contender oursPeer = Contender.ours(peerRegistry, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE));
        Contender expirable = Contender.permitExpirable(redisson, LEASE);
        Contender expirablePeer = Contender.permitExpirable(redissonPeer, LEASE);
        Contender plain = Contender.rSemaphore(redisson);
        Contender plainPeer = Contender.rSemaphore(redissonPeer);
        Contender floor = Contender.floor(floorConnection);

        printMachine(server, stats, options);
        if (options.runs("throughput")) {
            List<Throughput.Result> results = new ArrayList<>();
            for (Contender contender : List.of(ours, expirable, plain, floor)) {
                results.add(Throughput.measure(contender, options, stats));
            }
            Throughput.print(results, options);
        }
        if (options.runs("handoff")) {
            long[] ping = stats.pingMicros(options.handoffWarmup(), options.handoffs());
            List<HandOff.Result> results = new ArrayList<>();
            results.add(HandOff.measure(ours, oursPeer, options));
            results.add(HandOff.measure(expirable, expirablePeer, options));
            results.add(HandOff.measure(plain, plainPeer, options));
            HandOff.print(ping, results, options);
        }
        if (options.runs("waiters")) {
            List<IdleWaiters.Result> results = new ArrayList<>();
            results.add(IdleWaiters.measure(ours, oursPeer, options, stats));
            results.add(IdleWaiters.measure(expirable, expirablePeer, options, stats));
            results.add(IdleWaiters.measure(plain, plainPeer, options, stats));
            IdleWaiters.print(results, options);
        }
        if (options.runs("holders")) {
            HolderScaling.Clients clients = new HolderScaling.Clients(server.connectionFactory(),
                    server.connectionFactory(), Contender.ours(registry, SemaphoreSettings.DEFAULTS.withFair(false)),
                    Contender.permitExpirable(redissonPeer, Duration.ofMinutes(10)), expirable);
            List<HolderScaling.Row> rows = new ArrayList<>();
            for (int holders : options.holders()) {
                rows.add(HolderScaling.measure(holders, clients, options, stats));
            }
            HolderScaling.print(rows, options);
        }
        if (options.runs("renewal")) {
            RedisConnectionFactory factory = server.connectionFactory();
            int permits = options.renewalPermits();
            List<Renewal.Result> results = new ArrayList<>();
            results.add(Renewal.measure(factory, 1, permits, options.renewalTicks(), stats));
            results.add(Renewal.measure(factory, 10, permits, options.renewalTicks(), stats));
            Renewal.print(results);
        }
        if (options.runs("rediscost")) {
            RedisCost.run(options, toClose);
        }
    }

    /** Redisson's single-server client with a pool of {@code pool} connections, all opened up front. */
    private static RedissonClient redisson(String uri, int pool) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri).setConnectionPoolSize(pool).setConnectionMinimumIdleSize(pool);
        return Redisson.create(config);
    }

    private static void printMachine(RedisServer server, RedisStats stats, BenchmarkOptions options) {
        System.out.printf("%nMachine: %d cores (%s), %s %s, Java %s%n", Runtime.getRuntime().availableProcessors(),
                cpuModel().orElse("cpu model unknown"), System.getProperty("os.name"), System.getProperty("os.arch"),
                System.getProperty("java.version"));
        System.out.printf("Redis %s at %s (%s)%n", stats.version(), server.uri(),
                server.managed() ? "started by the benchmark" : "REDIS_URL");
        System.out.printf("Clients: ours on Lettuce (Spring Data Redis, one shared connection per registry);"
                + " Redisson %s with a %d-connection pool; floor on Lettuce, one shared connection%n",
                Redisson.class.getPackage().getImplementationVersion(), options.redissonPool());
        System.out.printf("Options: %s%n", options.describe());
    }

    private static Optional<String> cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).trim()).findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
