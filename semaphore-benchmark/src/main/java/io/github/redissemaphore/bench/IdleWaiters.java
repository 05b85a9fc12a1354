package io.github.redissemaphore.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.node.ObjectNode;

/**
 * The cost of waiting: one permit is held (by another client) and many callers of one JVM wait
 * for it. Counts what Redis receives meanwhile: the commands clients send (MONITOR, without
 * what scripts run) and everything Redis executes (INFO commandstats, scripts' commands
 * included), per waiter per second. Afterwards the permit is handed from waiter to waiter
 * until every one has had it, so nothing is left waiting for the next measure.
 */
final class IdleWaiters {

    /** Keep-alive of idle connections, not caused by waiting: listed, not counted. */
    private static final String KEEP_ALIVE = "ping";

    private IdleWaiters() {
    }

    /** What one contender's waiters cost. */
    record Result(String label, String key, int waiters, double seconds, Map<String, Long> clientCommands, long allCommands) {

        long counted() {
            return clientCommands.entrySet().stream().filter(entry -> !entry.getKey().equals(KEEP_ALIVE))
                    .mapToLong(Map.Entry::getValue).sum();
        }

        double perWaiterPerSecond(double commands) {
            return commands / waiters / seconds;
        }
    }

    static Result measure(Contender holderSide, Contender waiterSide, BenchmarkOptions options, RedisStats stats)
            throws Exception {
        String name = "bench-waiters-" + holderSide.label().replace(' ', '-');
        Contender.Handle holder = holderSide.semaphore(name, 1);
        Contender.Handle waiter = waiterSide.semaphore(name, 1);
        Object held = holder.tryAcquire();
        List<CompletableFuture<Object>> waiting = new ArrayList<>();
        for (int i = 0; i < options.waiters(); i++) {
            waiting.add(waiter.acquireAsync());
        }
        // Lets every waiter get in line (queued, subscribed): its first commands are not the steady state.
        Thread.sleep(1000);
        Map<String, Long> clientCommands;
        long allCommands;
        long elapsed;
        try (RedisStats.ClientCommands monitor = stats.monitor()) {
            // Both counts over the same window, as far as two readings can be: a call landing
            // between them is the only difference.
            stats.reset();
            long begin = System.nanoTime();
            Thread.sleep(options.waitWindow().toMillis());
            allCommands = stats.commands().entrySet().stream().filter(entry -> !entry.getKey().equals(KEEP_ALIVE))
                    .mapToLong(entry -> entry.getValue().calls()).sum();
            clientCommands = monitor.counts();
            elapsed = System.nanoTime() - begin;
        }
        drain(holder, Objects.requireNonNull(held, "held"), waiter, waiting);
        return new Result(holderSide.label(), holderSide.key(), options.waiters(), elapsed / 1e9, clientCommands, allCommands);
    }

    /** Releases the permit, and each waiter's once it has it, until every waiter is served. */
    private static void drain(Contender.Handle holder, Object held, Contender.Handle waiter,
                              List<CompletableFuture<Object>> waiting) throws Exception {
        holder.release(held);
        List<CompletableFuture<Object>> left = new ArrayList<>(waiting);
        while (!left.isEmpty()) {
            CompletableFuture.anyOf(left.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            for (CompletableFuture<Object> future : List.copyOf(left)) {
                if (future.isDone()) {
                    // Released from this thread: a Redisson sync call must not run on its callback threads.
                    waiter.release(future.join());
                    left.remove(future);
                }
            }
        }
    }

    static void print(List<Result> results, BenchmarkOptions options) {
        Report.heading(String.format("Redis commands while %d callers wait for 1 held permit", options.waiters()),
                String.format("over %s s, after the waiters settled for 1 s; client commands from MONITOR (without what"
                        + " scripts run, connection keep-alive PINGs listed but not counted); all commands from"
                        + " INFO commandstats (incl. those scripts run)", options.waitWindow().toMillis() / 1000.0));
        Report.line("%-42s %16s %16s   %s", "contender", "client cmds", "all cmds", "client commands seen");
        Report.line("%-42s %16s %16s", "", "/waiter/s", "/waiter/s");
        for (Result result : results) {
            Report.line("%-42s %16.4f %16.4f   %s", result.label(), result.perWaiterPerSecond(result.counted()),
                    result.perWaiterPerSecond(result.allCommands()), Report.commands(result.clientCommands()));
        }
        System.out.println();
        Result ours = results.get(0);
        for (Result other : results.subList(1, results.size())) {
            Report.line("%-42s %16s %16s", "ours / " + other.label(), Report.ratio(ours.counted(), other.counted()),
                    Report.ratio(ours.allCommands(), other.allCommands()));
        }
    }

    /**
     * Puts the table into {@code into}: per contender (by key) the client commands and all commands
     * per waiter per second (4 decimals) and the client commands seen; under {@code ratios}, ours /
     * each other (null where the other sent none).
     */
    static void record(List<Result> results, BenchmarkOptions options, ObjectNode into) {
        into.put("waiters", options.waiters());
        into.put("windowSeconds", options.waitWindow().toMillis() / 1000.0);
        for (Result result : results) {
            ObjectNode row = into.putObject(result.key());
            row.put("label", result.label());
            Results.put(row, "clientCommandsPerWaiterPerSecond", result.perWaiterPerSecond(result.counted()), 4);
            Results.put(row, "allCommandsPerWaiterPerSecond", result.perWaiterPerSecond(result.allCommands()), 4);
            ObjectNode seen = row.putObject("clientCommandsSeen");
            result.clientCommands().forEach((command, count) -> seen.put(command, count.longValue()));
        }
        ObjectNode ratios = into.putObject("ratios");
        Result ours = results.get(0);
        for (Result other : results.subList(1, results.size())) {
            ObjectNode ratio = ratios.putObject(ours.key() + "To" + Throughput.capitalized(other.key()));
            Results.ratio(ratio, "clientCommands", ours.counted(), other.counted());
            Results.ratio(ratio, "allCommands", ours.allCommands(), other.allCommands());
        }
    }
}
