package io.github.redissemaphore.bench;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.test.RedisServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.node.ObjectNode;

/**
 * What an acquire + release pair costs the Redis server, in the instructions it executes: a
 * {@code redis-server} of this measure's own runs under callgrind ({@link Callgrind}), so the
 * figures do not depend on how busy the machine is, and repeat runs agree within about 1 %.
 *
 * <p>Two cases per contender, each after a warm-up of the same kind (scripts loaded, connections
 * open, subscriptions made, JIT warm) so that its window holds only the pairs:
 * <ul>
 * <li>uncontended: one client, limit 10, {@code tryAcquire} + release, {@code bench.costPairs} pairs;</li>
 * <li>contended: 8 threads on one client, limit 2, each waiting for a permit and giving it back,
 *     until {@code bench.costContendedPairs} pairs have completed; every pair started completes,
 *     so the window ends with nobody waiting. The floor cannot wait and has no contended figure.</li>
 * </ul>
 * From each window's count the server's idle rate, measured the same way in the same run over a
 * window with nothing to do, is subtracted for the window's duration. The commands per pair are
 * {@code INFO commandstats} over the same window: the script calls and every command they ran.
 *
 * <p>Ours runs through the public API only ({@link SemaphoreRegistry} with default settings: fair,
 * lease 30 s, renewed), so the measure follows whatever scripts the core ships. Without valgrind
 * on the PATH it prints one line saying so and returns; with {@code -Dbench.requireRedisCost=true}
 * (CI) it fails instead.
 */
final class RedisCost {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final int UNCONTENDED_PERMITS = 10;
    private static final int CONTENDED_PERMITS = 2;
    private static final int CONTENDED_THREADS = 8;
    private static final Duration IDLE_WINDOW = Duration.ofSeconds(2);
    /**
     * Command timeout of every client, the registry's own bound included (its 2 s default is shorter
     * than the factory's and wins): a call on a server under callgrind takes ~50 times as long.
     */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    private RedisCost() {
    }

    /** One case of one contender: pairs completed in the window, what they cost. */
    record Case(long pairs, double instructionsPerPair, double seconds, Map<String, RedisStats.CommandStat> commands) {

        double commandsPerPair() {
            return (double) RedisStats.calls(commands) / pairs;
        }

        double scriptCallsPerPair() {
            return (double) RedisStats.scripts(commands).calls() / pairs;
        }
    }

    /** Both cases of one contender; {@code contended} is null for one that cannot wait. */
    record Result(String label, String key, Case uncontended, @Nullable Case contended) {
    }

    /**
     * Measures every contender on a server under callgrind and prints the table, or prints why it
     * cannot; the server and the clients it opens go on {@code toClose}, the clients after the
     * server, so that they are closed before it. The figures go into {@code into} ({@link #record}).
     */
    static void run(BenchmarkOptions options, Deque<AutoCloseable> toClose, ObjectNode into) throws Exception {
        List<String> missing = Callgrind.missingTools();
        if (!missing.isEmpty() && Boolean.getBoolean("bench.requireRedisCost")) {
            throw new IllegalStateException("Redis cost: cannot be measured, " + String.join(" and ", missing)
                    + " not on the PATH (" + Callgrind.INSTALL_HINT + "), and bench.requireRedisCost is set");
        }
        if (!missing.isEmpty()) {
            String why = String.format("%s not on the PATH (%s)", String.join(" and ", missing), Callgrind.INSTALL_HINT);
            System.out.printf("%nRedis cost: not measured, %s%n", why);
            into.put("measured", false);
            into.put("why", why);
            return;
        }
        Callgrind callgrind = Callgrind.start();
        toClose.push(callgrind);
        RedisServer server = callgrind.server();
        RedisURI uri = RedisURI.create(server.uri());
        uri.setTimeout(COMMAND_TIMEOUT);
        RedisClient lettuce = RedisClient.create(uri);
        toClose.push(lettuce::shutdown);
        RedisStats stats = new RedisStats(lettuce, server.host(), server.port());
        toClose.push(stats);
        StatefulRedisConnection<String, String> floorConnection = lettuce.connect();
        toClose.push(floorConnection);
        SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(COMMAND_TIMEOUT))
                .redisTimeout(COMMAND_TIMEOUT).build();
        toClose.push(registry);
        RedissonClient redisson = redisson(server.uri());
        toClose.push(redisson::shutdown);

        Contender expirable = Contender.permitExpirable(redisson, LEASE);
        List<Contender> contenders = List.of(Contender.ours(registry, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE)),
                Contender.capped(registry, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE)),
                Contender.bounded(registry, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE)),
                Contender.rated(registry, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE)),
                expirable, Contender.rSemaphore(redisson), Contender.floor(floorConnection));
        double idleRate = callgrind.idleRate(IDLE_WINDOW);
        List<Result> results = new ArrayList<>();
        for (int i = 0; i < contenders.size(); i++) {
            Contender contender = contenders.get(i);
            // A Lua VM of its own: a script costs more in one that others' scripts have filled (the
            // floor's EVALSHA, measured last, cost 10 % more before this flush).
            server.adminCommand("SCRIPT", "FLUSH", "SYNC");
            Case uncontended = uncontended(contender, i, options.costPairs(), callgrind, idleRate, stats);
            Case contended = contender instanceof Contender.Floor ? null
                    : contended(contender, i, options.costContendedPairs(), callgrind, idleRate, stats);
            results.add(new Result(contender.label(), contender.key(), uncontended, contended));
        }
        Result reference = results.get(contenders.indexOf(expirable));
        print(results, reference, idleRate, stats.version(), server, options);
        record(results, reference, idleRate, stats.version(), options, into);
    }

    /**
     * Redisson's single-server client: a connection per contending thread, all opened up front; no
     * keep-alive PINGs, which would land in the windows; timeouts for a slow server.
     */
    private static RedissonClient redisson(String uri) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri).setConnectionPoolSize(CONTENDED_THREADS)
                .setConnectionMinimumIdleSize(CONTENDED_THREADS).setPingConnectionInterval(0)
                .setTimeout((int) COMMAND_TIMEOUT.toMillis());
        return Redisson.create(config);
    }

    private static Case uncontended(Contender contender, int index, int pairs, Callgrind callgrind, double idleRate,
                                    RedisStats stats) throws Exception {
        Contender.Handle semaphore = contender.semaphore(name("uncontended", index), UNCONTENDED_PERMITS);
        oneClient(semaphore, warmup(pairs));
        return measure(() -> oneClient(semaphore, pairs), callgrind, idleRate, stats);
    }

    private static Case contended(Contender contender, int index, int pairs, Callgrind callgrind, double idleRate,
                                  RedisStats stats) throws Exception {
        Contender.Handle semaphore = contender.semaphore(name("contended", index), CONTENDED_PERMITS);
        contending(semaphore, warmup(pairs));
        return measure(() -> contending(semaphore, pairs), callgrind, idleRate, stats);
    }

    /**
     * @return a short name of the same length for every contender, as users name semaphores
     *         ("reports"): Redisson's scripts repeat the name in keys and arguments, and a name of
     *         57 characters made its RPermitExpirableSemaphore pair cost 10 % more than one of 7
     */
    private static String name(String kind, int contender) {
        return "cost-" + kind.charAt(0) + contender;
    }

    /** @return the warm-up pairs before a window of {@code pairs}: a tenth as many, at least 20 */
    private static int warmup(int pairs) {
        return Math.max(pairs / 10, 20);
    }

    /** Work that runs pairs. */
    @FunctionalInterface
    private interface Pairs {
        /** @return the pairs completed */
        long run() throws Exception;
    }

    /** Counts the instructions and commands of {@code work}, per pair it completed. */
    private static Case measure(Pairs work, Callgrind callgrind, double idleRate, RedisStats stats) throws Exception {
        long[] completed = new long[1];
        // Outside the window: CONFIG RESETSTAT before it, INFO after it.
        stats.reset();
        Callgrind.Count count = callgrind.count(() -> completed[0] = work.run());
        Map<String, RedisStats.CommandStat> commands = stats.commands();
        if (completed[0] == 0) {
            throw new IllegalStateException("no pair completed in the window");
        }
        double instructions = count.instructions() - idleRate * count.seconds();
        return new Case(completed[0], instructions / completed[0], count.seconds(), commands);
    }

    /**
     * One client, one pair after the other, each permit free at once.
     *
     * @return the pairs completed: all
     */
    private static long oneClient(Contender.Handle semaphore, int pairs) {
        for (int i = 0; i < pairs; i++) {
            Object lease = semaphore.tryAcquire();
            if (lease == null) {
                throw new IllegalStateException("no permit free, though nobody else holds one");
            }
            semaphore.release(lease);
        }
        return pairs;
    }

    /**
     * {@link #CONTENDED_THREADS} threads wait for a permit and give it back until {@code pairs}
     * pairs have started; each started pair completes, as the releases keep the permits moving.
     *
     * @return the pairs completed
     */
    private static long contending(Contender.Handle semaphore, int pairs) throws InterruptedException {
        AtomicInteger started = new AtomicInteger();
        LongAdder completed = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < CONTENDED_THREADS; i++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                    while (!stop.get() && started.incrementAndGet() <= pairs) {
                        Object lease = semaphore.acquireAsync().get(Contender.LONG_WAIT.toMillis(),
                                TimeUnit.MILLISECONDS);
                        semaphore.release(lease);
                        completed.increment();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    stop.set(true);
                }
            }, "cost-contender-" + i);
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a contending thread failed", failure.get());
        }
        return completed.sum();
    }

    private static void print(List<Result> results, Result reference, double idleRate, String version,
                              RedisServer server, BenchmarkOptions options) {
        Report.heading("Redis cost: instructions the server executes per acquire + release pair",
                String.format("Counted by callgrind (%s) on Redis %s of this measure's own (%s), the server's idle"
                        + " rate (%s instructions/s) times each window's length subtracted; not changed by a busy"
                        + " machine.%nUncontended: 1 client, limit %d, %s pairs; contended: %d threads on one client,"
                        + " limit %d, per completed pair, %s pairs; each after a warm-up of a tenth as many (at least"
                        + " 20).%nCommands per pair: INFO commandstats over the same window, script calls and every"
                        + " command they ran, script calls in brackets.",
                        Callgrind.valgrindVersion(), version, server, Report.count(idleRate), UNCONTENDED_PERMITS,
                        Report.count(options.costPairs()), CONTENDED_THREADS, CONTENDED_PERMITS,
                        Report.count(options.costContendedPairs())));
        String columns = "%-36s %18s %16s %18s %16s %14s %14s";
        Report.line(columns, "contender", "uncontended i/pair", "commands/pair", "contended i/pair", "commands/pair",
                "/ RPES uncont.", "/ RPES cont.");
        for (Result result : results) {
            Report.line(columns, result.label(), instructions(result.uncontended()), commands(result.uncontended()),
                    instructions(result.contended()), commands(result.contended()),
                    Report.ratio(perPair(result.uncontended()), perPair(reference.uncontended())),
                    Report.ratio(perPair(result.contended()), perPair(reference.contended())));
        }
        System.out.println();
        Result ours = results.get(0);
        for (Result result : results) {
            if (result.key().equals("oursCapped") || result.key().equals("oursBounded")
                    || result.key().equals("oursRated")) {
                Report.line("%-36s %18s %16s %18s   (/ ours)", result.label(),
                        Report.ratio(perPair(result.uncontended()), perPair(ours.uncontended())), "",
                        Report.ratio(perPair(result.contended()), perPair(ours.contended())));
                System.out.println();
            }
        }
        for (Result result : results) {
            Report.line("%-36s uncontended (%s s): %s", result.label(), Report.decimal(result.uncontended().seconds()),
                    RedisStats.perPair(result.uncontended().commands(), result.uncontended().pairs()));
            if (result.contended() != null) {
                Report.line("%-36s contended (%s s): %s", "", Report.decimal(result.contended().seconds()),
                        RedisStats.perPair(result.contended().commands(), result.contended().pairs()));
            }
        }
    }

    /**
     * Puts the table into {@code into}: the valgrind and Redis versions, the idle rate and the pairs
     * counted; per contender (by key) its {@code uncontended} and {@code contended} case (null for
     * the floor) with pairs, instructions per pair (whole), commands and script calls per pair, the
     * window's seconds and every command per pair; under {@code ratios}, each contender's
     * instructions / Redisson {@code RPermitExpirableSemaphore}'s ({@code toRedissonPermitExpirable})
     * and each capped one's / ours ({@code toOurs}).
     */
    private static void record(List<Result> results, Result reference, double idleRate, String version,
                               BenchmarkOptions options, ObjectNode into) {
        into.put("measured", true);
        into.put("valgrind", Callgrind.valgrindVersion());
        into.put("redis", version);
        Results.put(into, "idleInstructionsPerSecond", idleRate, 0);
        into.put("uncontendedPermits", UNCONTENDED_PERMITS);
        into.put("uncontendedPairs", options.costPairs());
        into.put("contendedThreads", CONTENDED_THREADS);
        into.put("contendedPermits", CONTENDED_PERMITS);
        into.put("contendedPairs", options.costContendedPairs());
        for (Result result : results) {
            ObjectNode row = into.putObject(result.key());
            row.put("label", result.label());
            recordCase(row, "uncontended", result.uncontended());
            recordCase(row, "contended", result.contended());
        }
        Result ours = results.get(0);
        ObjectNode ratios = into.putObject("ratios");
        ObjectNode toReference = ratios.putObject("to" + Throughput.capitalized(reference.key()));
        for (Result result : results) {
            ObjectNode ratio = toReference.putObject(result.key());
            Results.ratio(ratio, "uncontended", perPair(result.uncontended()), perPair(reference.uncontended()));
            Results.ratio(ratio, "contended", perPair(result.contended()), perPair(reference.contended()));
        }
        ObjectNode toOurs = ratios.putObject("toOurs");
        for (Result result : results) {
            if (result.key().equals("oursCapped") || result.key().equals("oursBounded")
                    || result.key().equals("oursRated")) {
                ObjectNode ratio = toOurs.putObject(result.key());
                Results.ratio(ratio, "uncontended", perPair(result.uncontended()), perPair(ours.uncontended()));
                Results.ratio(ratio, "contended", perPair(result.contended()), perPair(ours.contended()));
            }
        }
    }

    private static void recordCase(ObjectNode row, String name, @Nullable Case counted) {
        if (counted == null) {
            row.putNull(name);
            return;
        }
        ObjectNode figures = row.putObject(name);
        figures.put("pairs", counted.pairs());
        Results.put(figures, "instructionsPerPair", counted.instructionsPerPair(), 0);
        Results.put(figures, "commandsPerPair", counted.commandsPerPair(), 2);
        Results.put(figures, "scriptCallsPerPair", counted.scriptCallsPerPair(), 2);
        Results.put(figures, "seconds", counted.seconds(), 2);
        Results.perPair(figures, "commands", counted.commands(), counted.pairs());
    }

    private static double perPair(@Nullable Case counted) {
        return counted == null ? Double.NaN : counted.instructionsPerPair();
    }

    private static String instructions(@Nullable Case counted) {
        return Report.count(perPair(counted));
    }

    private static String commands(@Nullable Case counted) {
        return counted == null ? "-" : Report.decimal(counted.commandsPerPair()) + " ("
                + Report.decimal(counted.scriptCallsPerPair()) + ")";
    }
}
