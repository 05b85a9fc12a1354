package io.github.redissemaphore.core;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A separate JVM whose threads call a semaphore with a rate in a loop, for
 * {@link RateWitnessTest}: each call waits for its permit, then reports the moment its work starts
 * and ends (wall clock, µs, read by the caller itself: the witness), holds, and releases.
 *
 * <p>Arguments: host, port, key prefix, semaphore name, permits, rate-limit, rate-period ms,
 * threads, calls per thread, hold ms, wait ms, the epoch ms to start at. Prints one line per call,
 * {@code <start µs> <end µs> <fencing token>} or {@code refused <reason>} or {@code error <what>}, then
 * {@code done}, and exits.
 */
public final class RateCrowdProcess {

    private RateCrowdProcess() {
    }

    public static void main(String[] args) throws Exception {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
        factory.afterPropertiesSet();
        factory.start();
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory).keyPrefix(args[2]).build();
        RedisSemaphore semaphore = registry.semaphore(args[3], SemaphoreSettings.DEFAULTS
                .withPermits(Integer.parseInt(args[4]))
                .withRateLimit(Integer.parseInt(args[5]), Duration.ofMillis(Long.parseLong(args[6]))));
        int calls = Integer.parseInt(args[8]);
        long holdMs = Long.parseLong(args[9]);
        Duration wait = Duration.ofMillis(Long.parseLong(args[10]));
        long startAt = Long.parseLong(args[11]);
        // Warm: connections made, classes loaded, the inbox subscribed, on a semaphore of its own, so the
        // first measured call is not seen late by a cold JVM.
        RedisSemaphore warm = registry.semaphore(args[3] + "-warm", SemaphoreSettings.DEFAULTS.withPermits(100));
        for (int i = 0; i < 20; i++) {
            warm.acquire(1, Duration.ofSeconds(5)).release();
            semaphore.state();
        }
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < Integer.parseInt(args[7]); i++) {
            Thread thread = new Thread(() -> {
                sleepUntil(startAt);
                for (int call = 0; call < calls; call++) {
                    lines.add(call(semaphore, wait, holdMs));
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        lines.forEach(System.out::println);
        System.out.println("done");
        System.out.flush();
        registry.close();
        factory.destroy();
        System.exit(0);
    }

    private static String call(RedisSemaphore semaphore, Duration wait, long holdMs) {
        try {
            Permit permit = semaphore.acquire(1, wait);
            long start = micros();
            Thread.sleep(holdMs);
            long end = micros();
            permit.release();
            // (the fencing token: the server time of the grant in µs, to tell how late the start was seen)
            return start + " " + end + " " + permit.fencingToken();
        } catch (SemaphoreRejectedException e) {
            return "refused " + e.reason().tag();
        } catch (Exception e) {
            return "error " + e;
        }
    }

    private static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private static void sleepUntil(long epochMs) {
        try {
            Thread.sleep(Math.max(0, epochMs - System.currentTimeMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
