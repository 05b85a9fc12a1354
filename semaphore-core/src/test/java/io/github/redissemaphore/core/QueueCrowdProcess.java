package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A separate JVM whose threads all ask a bounded semaphore for a permit at one wall-clock moment,
 * for {@link QueueBoundBehaviourTest}'s race of two JVMs.
 *
 * <p>Arguments: host, port, key prefix, semaphore name, permits, max-waiters, threads, wait ms,
 * hold ms, the epoch ms to start at. Prints one line per thread, {@code granted},
 * {@code queue-full}, {@code wait-timed-out} or {@code error <what>}, then {@code done}, and exits.
 */
public final class QueueCrowdProcess {

    private QueueCrowdProcess() {
    }

    public static void main(String[] args) throws Exception {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
        factory.afterPropertiesSet();
        factory.start();
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory).keyPrefix(args[2]).build();
        RedisSemaphore semaphore = registry.semaphore(args[3], SemaphoreSettings.DEFAULTS
                .withPermits(Integer.parseInt(args[4])).withMaxWaiters(Integer.parseInt(args[5])));
        Duration wait = Duration.ofMillis(Long.parseLong(args[7]));
        long holdMs = Long.parseLong(args[8]);
        long startAt = Long.parseLong(args[9]);
        List<Thread> threads = new ArrayList<>();
        List<String> outcomes = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < Integer.parseInt(args[6]); i++) {
            Thread thread = new Thread(() -> outcomes.add(ask(semaphore, wait, holdMs, startAt)));
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        outcomes.forEach(System.out::println);
        System.out.println("done");
        System.out.flush();
        registry.close();
        factory.destroy();
        System.exit(0);
    }

    private static String ask(RedisSemaphore semaphore, Duration wait, long holdMs, long startAt) {
        try {
            Thread.sleep(Math.max(0, startAt - System.currentTimeMillis()));
            Permit permit = semaphore.acquire(1, wait);
            Thread.sleep(holdMs);
            permit.release();
            return "granted";
        } catch (SemaphoreRejectedException e) {
            return e.reason().tag();
        } catch (Exception e) {
            return "error " + e;
        }
    }

    /** @return the outcome lines of a finished process's output */
    static List<String> outcomes(List<String> lines) {
        Optional<String> done = lines.stream().filter("done"::equals).findFirst();
        if (done.isEmpty()) {
            throw new AssertionError("the crowd process did not finish: " + lines);
        }
        return lines.subList(0, lines.indexOf("done"));
    }
}
