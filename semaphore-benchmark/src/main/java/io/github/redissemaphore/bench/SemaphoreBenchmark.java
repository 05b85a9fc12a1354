package io.github.redissemaphore.bench;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

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
 *
 * <p>With {@code -Dbench.results=path} it also writes every figure it printed, with the date, the
 * machine, the versions and the command, to that JSON file ({@link Results}) once the whole run
 * has succeeded; the repository's is {@code docs/benchmark-results.json}, the one the pages quote.
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
        Results results = new Results();
        ObjectNode about = results.section("run");
        about.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        about.put("command", BenchmarkOptions.command());
        ObjectNode set = about.putObject("benchProperties");
        BenchmarkOptions.properties().forEach(set::put);
        options.record(about.putObject("options"));
        Machine.record(about.putObject("machine"), Machine.loadAverage());
        long begin = System.nanoTime();
        Deque<AutoCloseable> toClose = new ArrayDeque<>();
        try {
            run(options, toClose, results);
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
        Machine.loads(((ObjectNode) about.get("machine")).putArray("loadAverageAtEnd"), Machine.loadAverage());
        Results.put(about, "durationSeconds", (System.nanoTime() - begin) / 1e9, 0);
        Path file = options.results();
        if (file != null) {
            results.write(file);
            System.out.printf("%nResults written to %s%n", file.toAbsolutePath().normalize());
        }
    }

    private static void run(BenchmarkOptions options, Deque<AutoCloseable> toClose, Results figures)
            throws Exception {
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
        recordVersions(figures.section("run"), server, stats, options);
        if (options.runs("throughput")) {
            loadAtStart(figures.section("throughput"));
            List<Throughput.Result> results = new ArrayList<>();
            for (Contender contender : List.of(ours, expirable, plain, floor)) {
                results.add(Throughput.measure(contender, options, stats));
            }
            Throughput.print(results, options);
            Throughput.record(results, options, figures.section("throughput"));
        }
        if (options.runs("handoff")) {
            loadAtStart(figures.section("handoff"));
            long[] ping = stats.pingMicros(options.handoffWarmup(), options.handoffs());
            List<HandOff.Result> results = new ArrayList<>();
            results.add(HandOff.measure(ours, oursPeer, options));
            results.add(HandOff.measure(expirable, expirablePeer, options));
            results.add(HandOff.measure(plain, plainPeer, options));
            HandOff.print(ping, results, options);
            HandOff.record(ping, results, options, figures.section("handoff"));
        }
        if (options.runs("waiters")) {
            loadAtStart(figures.section("waiting"));
            List<IdleWaiters.Result> results = new ArrayList<>();
            results.add(IdleWaiters.measure(ours, oursPeer, options, stats));
            results.add(IdleWaiters.measure(expirable, expirablePeer, options, stats));
            results.add(IdleWaiters.measure(plain, plainPeer, options, stats));
            IdleWaiters.print(results, options);
            IdleWaiters.record(results, options, figures.section("waiting"));
        }
        if (options.runs("holders")) {
            loadAtStart(figures.section("scaling"));
            HolderScaling.Clients clients = new HolderScaling.Clients(server.connectionFactory(),
                    server.connectionFactory(), Contender.ours(registry, SemaphoreSettings.DEFAULTS.withFair(false)),
                    Contender.permitExpirable(redissonPeer, Duration.ofMinutes(10)), expirable);
            List<HolderScaling.Row> rows = new ArrayList<>();
            for (int holders : options.holders()) {
                rows.add(HolderScaling.measure(holders, clients, options, stats));
            }
            HolderScaling.print(rows, options);
            HolderScaling.record(rows, options, figures.section("scaling"));
        }
        if (options.runs("renewal")) {
            loadAtStart(figures.section("renewal"));
            RedisConnectionFactory factory = server.connectionFactory();
            int permits = options.renewalPermits();
            List<Renewal.Result> results = new ArrayList<>();
            results.add(Renewal.measure(factory, 1, permits, options.renewalTicks(), stats));
            results.add(Renewal.measure(factory, 10, permits, options.renewalTicks(), stats));
            Renewal.print(results);
            Renewal.record(results, figures.section("renewal"));
        }
        if (options.runs("rediscost")) {
            loadAtStart(figures.section("redisCost"));
            RedisCost.run(options, toClose, figures.section("redisCost"));
        }
    }

    /** Redisson's single-server client with a pool of {@code pool} connections, all opened up front. */
    private static RedissonClient redisson(String uri, int pool) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri).setConnectionPoolSize(pool).setConnectionMinimumIdleSize(pool);
        return Redisson.create(config);
    }

    private static void printMachine(RedisServer server, RedisStats stats, BenchmarkOptions options) {
        double[] load = Machine.loadAverage();
        System.out.printf("%nMachine: %d cores (%s), %s, Java %s, load average %s%n",
                Runtime.getRuntime().availableProcessors(), Machine.cpuModel().orElse("cpu model unknown"),
                Machine.os(), System.getProperty("java.version"),
                String.join(" ", Arrays.stream(load).mapToObj(Report::decimal).toList()));
        System.out.printf("Redis %s at %s (%s)%n", stats.version(), server.uri(),
                server.managed() ? "started by the benchmark" : "REDIS_URL");
        System.out.printf("Clients: ours on Lettuce (Spring Data Redis, one shared connection per registry);"
                + " Redisson %s with a %d-connection pool; floor on Lettuce, one shared connection%n",
                Redisson.class.getPackage().getImplementationVersion(), options.redissonPool());
        System.out.printf("Options: %s%n", options.describe());
    }

    /** Puts the load average as a measure starts: the machine is shared, and its load moves during a run. */
    private static void loadAtStart(ObjectNode section) {
        Machine.loads(section.putArray("loadAverageAtStart"), Machine.loadAverage());
    }

    /** Puts the Java, Redis and Redisson versions and the clients into the results file's {@code run}. */
    private static void recordVersions(ObjectNode into, RedisServer server, RedisStats stats,
                                       BenchmarkOptions options) {
        ObjectNode java = into.putObject("java");
        java.put("version", System.getProperty("java.version"));
        java.put("vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        ArrayNode flags = java.putArray("vmFlags");
        Machine.jvmFlags().forEach(flags::add);
        ObjectNode redis = into.putObject("redis");
        redis.put("version", stats.version());
        redis.put("server", server.managed() ? "started by the benchmark" : "REDIS_URL");
        into.put("redisson", String.valueOf(Redisson.class.getPackage().getImplementationVersion()));
        into.put("clients", String.format("ours on Lettuce (Spring Data Redis, one shared connection per registry);"
                + " Redisson with a %d-connection pool; floor on Lettuce, one shared connection",
                options.redissonPool()));
    }
}
