package io.github.redissemaphore.benchmark;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Measures the hand-off latency of a waiting caller: one "JVM" holds the only permit, another
 * waits in the queue, the holder releases, and the clock runs until the waiter's future
 * completes. Printed side by side with the Redis PING round trip measured in the same run, so the
 * ratio is meaningful on a noisy machine.
 *
 * <p>Run: {@code ./mvnw -B -q -pl semaphore-core test-compile exec:java@handoff-benchmark}
 * (optional system properties: {@code -Dhandoffs=2000}; {@code REDIS_URL} to use your own Redis).
 */
public final class HandOffBenchmark {

    private HandOffBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int handoffs = Integer.getInteger("handoffs", 2000);
        int warmup = Math.max(handoffs / 10, 100);
        try (RedisServer server = RedisServers.open()) {
            RedisConnectionFactory holderFactory = server.connectionFactory();
            try (SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(holderFactory).build();
                 SemaphoreRegistry waiterJvm = SemaphoreRegistry.builder(server.connectionFactory()).build()) {
                RedisSemaphore holder = holderJvm.semaphore("benchmark");
                RedisSemaphore waiter = waiterJvm.semaphore("benchmark");

                long[] ping = ping(holderFactory, warmup, handoffs);
                long[][] handoff = handOffs(holder, waiter, warmup, handoffs);

                System.out.printf("%nRedis %s, %d hand-offs after %d warm-up%n", server.uri(), handoffs, warmup);
                System.out.printf("%-44s %10s %10s %10s%n", "measure (microseconds)", "p50", "p99", "max");
                row("PING round trip", ping);
                row("release() call -> waiter holds the permit", handoff[0]);
                row("release() returned -> waiter holds it", handoff[1]);
                row("release() round trip (EVALSHA)", handoff[2]);
                System.out.printf("p50 hand-off / p50 PING: %.2f%n",
                        (double) percentile(handoff[1], 50) / percentile(ping, 50));
            }
        }
    }

    private static long[] ping(RedisConnectionFactory factory, int warmup, int count) {
        long[] micros = new long[count];
        try (RedisConnection connection = factory.getConnection()) {
            for (int i = -warmup; i < count; i++) {
                long start = System.nanoTime();
                connection.ping();
                if (i >= 0) {
                    micros[i] = (System.nanoTime() - start) / 1000;
                }
            }
        }
        return micros;
    }

    private static long[][] handOffs(RedisSemaphore holder, RedisSemaphore waiter, int warmup, int count)
            throws Exception {
        long[] fromCall = new long[count];
        long[] fromReturn = new long[count];
        long[] releaseCall = new long[count];
        Permit held = holder.tryAcquire().orElseThrow();
        for (int i = -warmup; i < count; i++) {
            // acquireAsync returns once the waiter is in the queue in Redis.
            long[] servedAt = new long[1];
            CompletableFuture<Permit> next = waiter.acquireAsync(1, Duration.ofSeconds(10))
                    .whenComplete((permit, error) -> servedAt[0] = System.nanoTime());
            long call = System.nanoTime();
            held.release();
            long returned = System.nanoTime();
            Permit handedOver = next.get(10, TimeUnit.SECONDS);
            if (i >= 0) {
                fromCall[i] = (servedAt[0] - call) / 1000;
                fromReturn[i] = Math.max(servedAt[0] - returned, 0) / 1000;
                releaseCall[i] = (returned - call) / 1000;
            }
            // Swap roles: the permit goes back to the holder side without a hand-off.
            handedOver.release();
            held = holder.tryAcquire().orElseThrow();
        }
        held.release();
        return new long[][] {fromCall, fromReturn, releaseCall};
    }

    private static void row(String label, long[] micros) {
        System.out.printf("%-44s %10d %10d %10d%n", label, percentile(micros, 50), percentile(micros, 99),
                Arrays.stream(micros).max().orElse(0));
    }

    private static long percentile(long[] values, int percentile) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(percentile / 100.0 * sorted.length) - 1)];
    }
}
