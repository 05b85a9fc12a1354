package io.github.redissemaphore.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import tools.jackson.databind.node.ObjectNode;

/**
 * Uncontended throughput: threads that each loop {@code tryAcquire} + {@code release} on one
 * semaphore with plenty of permits, so nobody ever waits. Pairs per second at each thread count
 * (median of the rounds, after one warm-up round), and what a pair costs Redis according to
 * {@code INFO commandstats} over all measured rounds.
 */
final class Throughput {

    /** Far more than the threads can hold at once. */
    private static final int PERMITS = 100_000;

    private Throughput() {
    }

    /** Figures of one contender. */
    record Result(String label, String key, double[] pairsPerSecond, long pairs, Map<String, RedisStats.CommandStat> commands) {

        RedisStats.CommandStat scripts() {
            return RedisStats.scripts(commands);
        }

        double scriptCallsPerPair() {
            return (double) scripts().calls() / pairs;
        }

        /** @return Redis microseconds per pair, scripts only (their time includes what they run) */
        double redisMicrosPerPair() {
            return (double) scripts().usec() / pairs;
        }
    }

    static Result measure(Contender contender, BenchmarkOptions options, RedisStats stats) throws InterruptedException {
        Contender.Handle semaphore = contender.semaphore("bench-throughput-" + contender.label().replace(' ', '-'),
                PERMITS);
        int[] threads = options.threads();
        // Warm-up: JIT, connection pools, script caches.
        round(semaphore, threads[threads.length - 1], options.roundDuration());
        stats.reset();
        double[] pairsPerSecond = new double[threads.length];
        long pairs = 0;
        for (int t = 0; t < threads.length; t++) {
            double[] rates = new double[options.rounds()];
            for (int r = 0; r < rates.length; r++) {
                long[] counted = round(semaphore, threads[t], options.roundDuration());
                pairs += counted[0];
                rates[r] = counted[0] * 1e9 / counted[1];
            }
            pairsPerSecond[t] = Report.median(rates);
        }
        return new Result(contender.label(), contender.key(), pairsPerSecond, pairs, stats.commands());
    }

    /**
     * Runs {@code threads} threads in a tryAcquire + release loop for {@code duration}.
     *
     * @return pairs completed and nanoseconds elapsed
     */
    static long[] round(Contender.Handle semaphore, int threads, Duration duration) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder pairs = new LongAdder();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    while (!stop.get()) {
                        Object lease = semaphore.tryAcquire();
                        if (lease == null) {
                            throw new IllegalStateException("no permit free, though nobody holds one for long");
                        }
                        semaphore.release(lease);
                        pairs.increment();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    stop.set(true);
                }
            }, "throughput-" + i);
            worker.start();
            workers.add(worker);
        }
        long begin = System.nanoTime();
        start.countDown();
        long end = begin + duration.toNanos();
        while (!stop.get() && System.nanoTime() < end) {
            Thread.sleep(Math.max(1, Math.min(50, (end - System.nanoTime()) / 1_000_000)));
        }
        stop.set(true);
        long elapsed = System.nanoTime() - begin;
        for (Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a throughput round failed", failure.get());
        }
        return new long[] {pairs.sum(), elapsed};
    }

    /** Prints the table; the first result is ours, the others are what it is compared with. */
    static void print(List<Result> results, BenchmarkOptions options) {
        int[] threads = options.threads();
        Report.heading("Uncontended tryAcquire + release",
                String.format("pairs/s: median of %d rounds of %s s after a warm-up round; Redis cost: INFO"
                        + " commandstats over all measured rounds (script calls only; their time includes what they"
                        + " run)",
                        options.rounds(), options.roundDuration().toMillis() / 1000.0));
        StringBuilder header = new StringBuilder(String.format("%-42s", "contender"));
        for (int t : threads) {
            header.append(String.format("%14s", "pairs/s @" + t));
        }
        header.append(String.format("  %-14s %10s %10s %10s", "command", "calls/pair", "us/call", "us/pair"));
        System.out.println(header);
        for (Result result : results) {
            StringBuilder row = new StringBuilder(String.format("%-42s", result.label()));
            for (double rate : result.pairsPerSecond()) {
                row.append(String.format("%14s", Report.count(rate)));
            }
            RedisStats.CommandStat scripts = result.scripts();
            row.append(String.format("  %-14s %10s %10s %10s", RedisStats.scriptNames(result.commands()),
                    Report.decimal(result.scriptCallsPerPair()), Report.decimal(scripts.usecPerCall()),
                    Report.decimal(result.redisMicrosPerPair())));
            System.out.println(row);
        }
        System.out.println();
        Result ours = results.get(0);
        for (Result other : results.subList(1, results.size())) {
            String label = "ours / " + other.label().replaceFirst(":.*", "");
            StringBuilder row = new StringBuilder(String.format("%-42s", label));
            for (int t = 0; t < threads.length; t++) {
                row.append(String.format("%14s", Report.ratio(ours.pairsPerSecond()[t], other.pairsPerSecond()[t])));
            }
            row.append(String.format("  %-14s %10s %10s %10s", "", "",
                    Report.ratio(ours.scripts().usecPerCall(), other.scripts().usecPerCall()),
                    Report.ratio(ours.redisMicrosPerPair(), other.redisMicrosPerPair())));
            System.out.println(row);
        }
        System.out.println();
        for (Result result : results) {
            System.out.printf("%-42s every command per pair, incl. those scripts run: %s%n", result.label(),
                    RedisStats.perPair(result.commands(), result.pairs()));
        }
    }

    /**
     * Puts the table into {@code into}: per contender (by key) its pairs/s by thread count, script
     * calls per pair, Redis microseconds per script call and per pair, and every command per pair;
     * then under {@code ratios}, ours / each other (e.g. {@code oursToRedissonPermitExpirable}).
     */
    static void record(List<Result> results, BenchmarkOptions options, ObjectNode into) {
        int[] threads = options.threads();
        into.put("rounds", options.rounds());
        into.put("roundSeconds", options.roundDuration().toMillis() / 1000.0);
        for (Result result : results) {
            ObjectNode row = into.putObject(result.key());
            row.put("label", result.label());
            ObjectNode rates = row.putObject("pairsPerSecond");
            for (int t = 0; t < threads.length; t++) {
                Results.put(rates, String.valueOf(threads[t]), result.pairsPerSecond()[t], 0);
            }
            Results.put(row, "scriptCallsPerPair", result.scriptCallsPerPair(), 2);
            Results.put(row, "usPerCall", result.scripts().usecPerCall(), 2);
            Results.put(row, "usPerPair", result.redisMicrosPerPair(), 2);
            Results.perPair(row, "commandsPerPair", result.commands(), result.pairs());
        }
        ObjectNode ratios = into.putObject("ratios");
        Result ours = results.get(0);
        for (Result other : results.subList(1, results.size())) {
            ObjectNode ratio = ratios.putObject(ours.key() + "To" + capitalized(other.key()));
            ObjectNode rates = ratio.putObject("pairsPerSecond");
            for (int t = 0; t < threads.length; t++) {
                Results.ratio(rates, String.valueOf(threads[t]), ours.pairsPerSecond()[t], other.pairsPerSecond()[t]);
            }
            Results.ratio(ratio, "usPerCall", ours.scripts().usecPerCall(), other.scripts().usecPerCall());
            Results.ratio(ratio, "usPerPair", ours.redisMicrosPerPair(), other.redisMicrosPerPair());
        }
    }

    /** @return "floor" as "Floor": the second half of a ratio's key */
    static String capitalized(String key) {
        return Character.toUpperCase(key.charAt(0)) + key.substring(1);
    }
}
