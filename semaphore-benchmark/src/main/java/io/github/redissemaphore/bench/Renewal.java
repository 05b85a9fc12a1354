package io.github.redissemaphore.bench;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * What keeping many permits alive costs: one JVM holds them with a short, auto-renewed lease,
 * and Redis counts the script calls over whole renewal ticks (every leaseTime/3). Ours renews
 * everything one JVM holds on one semaphore with one call per tick, so the expected figure is
 * one call per semaphore per tick, whatever the number of permits.
 */
final class Renewal {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TICK = LEASE.dividedBy(3);

    private Renewal() {
    }

    /** Calls counted over {@code ticks} ticks with {@code permits} permits held on {@code semaphores} semaphores. */
    record Result(int semaphores, int permits, int ticks, long calls, double usecPerCall) {
    }

    static Result measure(RedisConnectionFactory factory, int semaphores, int permits, int ticks, RedisStats stats)
            throws InterruptedException {
        int perSemaphore = permits / semaphores;
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE).withPermits(perSemaphore);
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(factory).build()) {
            List<Permit> held = new ArrayList<>(permits);
            // Each semaphore ticks TICK after its first permit was taken, and every TICK after that.
            long firstTaken = System.nanoTime();
            for (int s = 0; s < semaphores; s++) {
                RedisSemaphore semaphore = registry.semaphore("bench-renewal-" + semaphores + "-" + s, settings);
                for (int p = 0; p < perSemaphore; p++) {
                    held.add(semaphore.tryAcquire().orElseThrow());
                }
            }
            // Count from half a tick past a tick, over whole ticks, so each tick falls in the window
            // exactly once even if filling took longer than a tick or ticks drift by a few ms.
            long tickNanos = TICK.toNanos();
            long start = firstTaken + tickNanos / 2;
            while (start < System.nanoTime()) {
                start += tickNanos;
            }
            sleepUntil(start);
            stats.reset();
            sleepUntil(start + ticks * tickNanos);
            Map<String, RedisStats.CommandStat> commands = stats.commands();
            RedisStats.CommandStat scripts = RedisStats.scripts(commands);
            held.forEach(Permit::release);
            return new Result(semaphores, perSemaphore * semaphores, ticks, scripts.calls(), scripts.usecPerCall());
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }

    static void print(List<Result> results) {
        Report.heading("Renewal calls per tick",
                String.format("one JVM holds the permits with a %d s lease, renewed every %d ms; script calls counted"
                        + " over whole ticks (INFO commandstats)", LEASE.toSeconds(), TICK.toMillis()));
        Report.line("%-12s %14s %8s %14s %20s %18s %22s", "semaphores", "held permits", "ticks", "calls / tick",
                "expected calls/tick", "us / renew call", "us / permit / tick");
        for (Result result : results) {
            double callsPerTick = (double) result.calls() / result.ticks();
            Report.line("%-12d %14s %8d %14s %20d %18s %22s", result.semaphores(), Report.count(result.permits()),
                    result.ticks(), Report.decimal(callsPerTick), result.semaphores(),
                    Report.decimal(result.usecPerCall()),
                    Report.decimal(result.usecPerCall() * callsPerTick / result.permits()));
        }
        System.out.println();
        System.out.println("Redisson RPermitExpirableSemaphore has no automatic renewal: keeping N leases alive takes N"
                + " updateLeaseTime calls per period (not measured).");
    }

    /**
     * Puts the table into {@code into}: under {@code semaphores}, per number of semaphores, the held
     * permits, ticks counted, script calls per tick, the calls per tick expected, and Redis
     * microseconds per renew call and per permit per tick.
     */
    static void record(List<Result> results, ObjectNode into) {
        into.put("leaseSeconds", LEASE.toSeconds());
        into.put("tickMillis", TICK.toMillis());
        ObjectNode bySemaphores = into.putObject("semaphores");
        for (Result result : results) {
            double callsPerTick = (double) result.calls() / result.ticks();
            ObjectNode row = bySemaphores.putObject(String.valueOf(result.semaphores()));
            row.put("permits", result.permits());
            row.put("ticks", result.ticks());
            Results.put(row, "callsPerTick", callsPerTick, 2);
            row.put("expectedCallsPerTick", result.semaphores());
            Results.put(row, "usPerCall", result.usecPerCall(), 2);
            Results.put(row, "usPerPermitPerTick", result.usecPerCall() * callsPerTick / result.permits(), 2);
        }
    }
}
