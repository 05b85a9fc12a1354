package io.github.redissemaphore.bench;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import tools.jackson.databind.node.ObjectNode;

/**
 * Hand-off latency: one JVM holds the only permit, another waits for it, the holder releases;
 * the clock runs from the start of the release call until the waiter's future completes with
 * the permit. Holder and waiter are on different clients, as two JVMs would be. Printed next to
 * the PING round trip of the same run, so the ratio stays meaningful on a noisy machine.
 */
final class HandOff {

    private HandOff() {
    }

    /** Microseconds per hand-off of one contender. */
    record Result(String label, String key, long[] micros) {
    }

    /**
     * @param holderSide the contender the holder uses
     * @param waiterSide the same kind of contender on another client
     */
    static Result measure(Contender holderSide, Contender waiterSide, BenchmarkOptions options) throws Exception {
        String name = "bench-handoff-" + holderSide.label().replace(' ', '-');
        Contender.Handle holder = holderSide.semaphore(name, 1);
        Contender.Handle waiter = waiterSide.semaphore(name, 1);
        long[] micros = new long[options.handoffs()];
        Object held = holder.tryAcquire();
        for (int i = -options.handoffWarmup(); i < micros.length; i++) {
            long[] servedAt = new long[1];
            CompletableFuture<Object> next = waiter.acquireAsync()
                    .whenComplete((lease, error) -> servedAt[0] = System.nanoTime());
            // Lets the waiter get in line (queued, subscribed) before the clock starts; without it
            // Redisson's waiter could still be on its way and find the permit free on its first try.
            Thread.sleep(options.settle().toMillis());
            if (next.isDone()) {
                throw new IllegalStateException(holderSide.label() + ": the waiter got a permit that was held");
            }
            long call = System.nanoTime();
            holder.release(Objects.requireNonNull(held, "held"));
            Object handedOver;
            try {
                handedOver = next.get(10, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                if (i >= 0) {
                    throw new IllegalStateException(holderSide.label() + ": hand-off " + i + " did not reach the waiter"
                            + " within 10 s of the release", e);
                }
                handedOver = nudged(holder, next, holderSide.label() + ": warm-up hand-off " + i);
            }
            if (i >= 0) {
                micros[i] = (servedAt[0] - call) / 1000;
            }
            // Back to the holder without a hand-off, for the next round.
            waiter.release(handedOver);
            held = holder.tryAcquire();
            if (held == null) {
                throw new IllegalStateException(holderSide.label() + ": the permit did not come back");
            }
        }
        holder.release(Objects.requireNonNull(held, "held"));
        return new Result(holderSide.label(), holderSide.key(), micros);
    }

    /**
     * A warm-up hand-off the waiter's client missed (a Redisson waiter can miss the message of a
     * release that came while it was subscribing, on a loaded machine): the permit is taken and
     * given back, which tells the waiter again. Measured hand-offs get no such help.
     */
    private static Object nudged(Contender.Handle holder, CompletableFuture<Object> next, String what)
            throws Exception {
        Object nudge = holder.tryAcquire();
        if (nudge != null) {
            holder.release(nudge);
        }
        try {
            return next.get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + " did not reach the waiter within 10 s of the release, nor of"
                    + " a second one", e);
        }
    }

    /** Prints the table; the first result is ours. */
    static void print(long[] pingMicros, List<Result> results, BenchmarkOptions options) {
        Report.heading("Hand-off latency: release() call -> the waiter holds the permit",
                String.format("microseconds, %d hand-offs after %d warm-up ones; holder and waiter on separate clients;"
                        + " the waiter waits %d ms before each release", options.handoffs(), options.handoffWarmup(),
                        options.settle().toMillis()));
        long pingP50 = Report.percentile(pingMicros, 50);
        Report.line("%-42s %8s %8s %14s", "measure", "p50", "p99", "p50 / PING p50");
        Report.line("%-42s %8d %8d %14s", "PING round trip (Lettuce, same run)", pingP50,
                Report.percentile(pingMicros, 99), "1.00x");
        for (Result result : results) {
            long p50 = Report.percentile(result.micros(), 50);
            Report.line("%-42s %8d %8d %14s", result.label(), p50, Report.percentile(result.micros(), 99),
                    Report.ratio(p50, pingP50));
        }
        System.out.println();
        Result ours = results.get(0);
        for (Result other : results.subList(1, results.size())) {
            Report.line("%-42s %8s %8s", "ours / " + other.label(),
                    Report.ratio(Report.percentile(ours.micros(), 50), Report.percentile(other.micros(), 50)),
                    Report.ratio(Report.percentile(ours.micros(), 99), Report.percentile(other.micros(), 99)));
        }
    }

    /**
     * Puts the table into {@code into}: {@code ping} and each contender (by key) with p50 and p99 in
     * microseconds and {@code p50ToPing}; under {@code ratios}, ours / each other at p50 and p99.
     */
    static void record(long[] pingMicros, List<Result> results, BenchmarkOptions options, ObjectNode into) {
        into.put("handoffs", options.handoffs());
        into.put("warmup", options.handoffWarmup());
        into.put("settleMillis", options.settle().toMillis());
        long pingP50 = Report.percentile(pingMicros, 50);
        ObjectNode ping = into.putObject("ping");
        ping.put("p50", pingP50);
        ping.put("p99", Report.percentile(pingMicros, 99));
        for (Result result : results) {
            ObjectNode row = into.putObject(result.key());
            row.put("label", result.label());
            long p50 = Report.percentile(result.micros(), 50);
            row.put("p50", p50);
            row.put("p99", Report.percentile(result.micros(), 99));
            Results.ratio(row, "p50ToPing", p50, pingP50);
        }
        ObjectNode ratios = into.putObject("ratios");
        Result ours = results.get(0);
        for (Result other : results.subList(1, results.size())) {
            ObjectNode ratio = ratios.putObject(ours.key() + "To" + Throughput.capitalized(other.key()));
            Results.ratio(ratio, "p50", Report.percentile(ours.micros(), 50), Report.percentile(other.micros(), 50));
            Results.ratio(ratio, "p99", Report.percentile(ours.micros(), 99), Report.percentile(other.micros(), 99));
        }
    }
}
