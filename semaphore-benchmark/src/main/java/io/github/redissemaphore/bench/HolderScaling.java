package io.github.redissemaphore.bench;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Does a script get slower as a semaphore fills up? One caller runs acquire + release pairs on a
 * semaphore that other clients already hold N permits of (and, for ours, that 1,000 callers wait
 * on), and Redis reports the microseconds per script call. The target: with 10,000
 * holders and 1,000 waiters a script costs at most twice what it costs with 10 holders.
 *
 * <p>The permits are held with a 10-minute lease and no renewal, so no renewal call lands among
 * the measured ones; the waiters each want 101 permits while 100 are free, so they stay queued,
 * and the caller's semaphore is not fair, so it takes free permits past them.
 */
final class HolderScaling {

    private static final Duration LONG_LEASE = Duration.ofMinutes(10);
    /** Permits free besides the held ones; a waiter wants one more, so it never gets them. */
    private static final int FREE = 100;
    private static final int FILL_THREADS = 16;

    private HolderScaling() {
    }

    /** Microseconds per script call at one holder count; NaN where not measured. */
    record Row(int holders, double ours, double oursWithWaiters, double redisson) {
    }

    /** Clients: ours on two factories of their own (holders, waiters), Redisson holders and caller. */
    record Clients(RedisConnectionFactory holdersFactory, RedisConnectionFactory waitersFactory, Contender oursCaller,
                   Contender redissonHolders, Contender redissonCaller) {
    }

    static Row measure(int holders, Clients clients, BenchmarkOptions options, RedisStats stats) throws Exception {
        SemaphoreSettings held = SemaphoreSettings.DEFAULTS.withFair(false).withLeaseTime(LONG_LEASE)
                .withAutoRenew(false).withPermits(holders + FREE);
        String name = "bench-holders-" + holders;
        double ours;
        double oursWithWaiters = Double.NaN;
        try (SemaphoreRegistry holdersJvm = SemaphoreRegistry.builder(clients.holdersFactory()).build()) {
            Contender.Handle holderSide = Contender.ours(holdersJvm, held).semaphore(name, holders + FREE);
            List<Object> leases = inParallel(holders, i -> holderSide.tryAcquire());
            Contender.Handle caller = clients.oursCaller().semaphore(name, holders + FREE);
            ours = scriptMicros(caller, options.scalingPairs(), stats);
            if (options.scalingWaiters() > 0) {
                // Ticks far apart: no heartbeat call among the measured ones.
                try (SemaphoreRegistry waitersJvm = SemaphoreRegistry.builder(clients.waitersFactory())
                        .waiterTick(Duration.ofMinutes(10)).waiterHeartbeat(Duration.ofMinutes(30)).build()) {
                    RedisSemaphore waiters = waitersJvm.semaphore(name, held);
                    List<CompletableFuture<Permit>> waiting = new ArrayList<>();
                    for (int i = 0; i < options.scalingWaiters(); i++) {
                        // Returns once queued in Redis.
                        waiting.add(waiters.acquireAsync(FREE + 1, Contender.LONG_WAIT));
                    }
                    oursWithWaiters = scriptMicros(caller, options.scalingPairs(), stats);
                    if (waiting.stream().anyMatch(CompletableFuture::isDone)) {
                        throw new IllegalStateException("a waiter of " + (FREE + 1) + " permits was served");
                    }
                }
            }
            inParallel(leases.size(), i -> {
                holderSide.release(leases.get(i));
                return null;
            });
        }
        String redissonName = "bench-holders-redisson-" + holders;
        Contender.Handle redissonHolder = clients.redissonHolders().semaphore(redissonName, holders + FREE);
        List<Object> redissonLeases = inParallel(holders, i -> redissonHolder.tryAcquire());
        double redisson = scriptMicros(clients.redissonCaller().semaphore(redissonName, holders + FREE),
                options.scalingPairs(), stats);
        inParallel(redissonLeases.size(), i -> {
            redissonHolder.release(redissonLeases.get(i));
            return null;
        });
        return new Row(holders, ours, oursWithWaiters, redisson);
    }

    /** @return Redis microseconds per script call over {@code pairs} acquire + release pairs of one caller */
    private static double scriptMicros(Contender.Handle caller, int pairs, RedisStats stats) {
        for (int i = 0; i < pairs / 10; i++) {
            caller.release(Objects.requireNonNull(caller.tryAcquire(), "a permit of an idle semaphore"));
        }
        stats.reset();
        for (int i = 0; i < pairs; i++) {
            Object lease = caller.tryAcquire();
            if (lease == null) {
                throw new IllegalStateException("no permit free for the caller");
            }
            caller.release(lease);
        }
        return RedisStats.scripts(stats.commands()).usecPerCall();
    }

    /** @return the results of {@code task(0..n-1)}, run on a few threads: filling 10,000 holders one by one is slow */
    private static List<Object> inParallel(int n, IntFunction<Object> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(FILL_THREADS);
        try {
            List<Callable<Object>> tasks = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int index = i;
                tasks.add(() -> {
                    Object result = task.apply(index);
                    return result == null ? Boolean.FALSE : result;
                });
            }
            List<Object> results = new ArrayList<>(n);
            for (Future<Object> future : pool.invokeAll(tasks)) {
                results.add(future.get());
            }
            return results;
        } finally {
            pool.shutdown();
        }
    }

    static void print(List<Row> rows, BenchmarkOptions options) {
        Report.heading("Cost of one script call as holders (and waiters) pile up",
                String.format("Redis microseconds per script call (INFO commandstats), %d acquire + release pairs of"
                        + " one caller per cell, while other clients hold N permits (10-minute leases)",
                        options.scalingPairs()));
        String withWaiters = "ours + " + Report.count(options.scalingWaiters()) + " waiters";
        Report.line("%-10s %12s %24s %36s %16s", "holders", "ours", withWaiters, "Redisson RPermitExpirableSemaphore",
                "ours / Redisson");
        for (Row row : rows) {
            Report.line("%-10s %12s %24s %36s %16s", Report.count(row.holders()), Report.decimal(row.ours()),
                    Report.decimal(row.oursWithWaiters()), Report.decimal(row.redisson()),
                    Report.ratio(row.ours(), row.redisson()));
        }
        System.out.println();
        Row first = rows.get(0);
        for (Row row : rows.subList(1, rows.size())) {
            Report.line("%-10s %12s %24s %36s   (each / its own %s-holder cost without waiters; target for ours"
                            + " <= 2x)", Report.count(row.holders()), Report.ratio(row.ours(), first.ours()),
                    Report.ratio(row.oursWithWaiters(), first.ours()), Report.ratio(row.redisson(), first.redisson()),
                    Report.count(first.holders()));
        }
    }

    /**
     * Puts the table into {@code into}: under {@code holders}, per holder count, the Redis
     * microseconds per script call of ours, ours with the waiters ({@code oursWithWaiters}, null when
     * none were queued) and Redisson's {@code RPermitExpirableSemaphore}, and ours / Redisson; under
     * {@code toFirst}, each count's figures / its own at the first count (ours with waiters / ours
     * without), the target being at most 2x.
     */
    static void record(List<Row> rows, BenchmarkOptions options, ObjectNode into) {
        into.put("pairs", options.scalingPairs());
        into.put("waiters", options.scalingWaiters());
        ObjectNode byHolders = into.putObject("holders");
        for (Row row : rows) {
            ObjectNode cell = byHolders.putObject(String.valueOf(row.holders()));
            Results.put(cell, "ours", row.ours(), 2);
            Results.put(cell, "oursWithWaiters", row.oursWithWaiters(), 2);
            Results.put(cell, "redissonPermitExpirable", row.redisson(), 2);
            Results.ratio(cell, "oursToRedissonPermitExpirable", row.ours(), row.redisson());
        }
        ObjectNode toFirst = into.putObject("toFirst");
        Row first = rows.get(0);
        for (Row row : rows.subList(1, rows.size())) {
            ObjectNode cell = toFirst.putObject(String.valueOf(row.holders()));
            Results.ratio(cell, "ours", row.ours(), first.ours());
            Results.ratio(cell, "oursWithWaiters", row.oursWithWaiters(), first.ours());
            Results.ratio(cell, "redissonPermitExpirable", row.redisson(), first.redisson());
        }
    }
}
