package io.github.redissemaphore.chaos;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.WhenUnavailable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One instance of {@link DegradedFleetTest}'s fleet, a JVM of its own: its threads take a permit
 * of a {@code when-unavailable: local} semaphore (share from the fleet), enter the independent
 * {@link Witness}, hold 10-60 ms (a permit granted locally, one time in six, 1.5 s, so that some
 * are held when Redis comes back), leave, release; a probe thread times decisions taken while the
 * semaphore is degraded ({@code tryAcquire()} without a wait, every 20 ms).
 *
 * <p>Arguments: runDir wid semHost semPort witnessPort permits leaseMs threads seed commandTimeoutMs
 * waitMs name. Runs until {@code runDir/stop} exists, then prints {@code summary k=v ...} and exits.
 * Prints {@code redis-again <epoch ms>} at the first grant through Redis after one granted locally.
 */
public final class DegradedWorker {

    private DegradedWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        String wid = args[1];
        int permits = Integer.parseInt(args[5]);
        long leaseMs = Long.parseLong(args[6]);
        int threads = Integer.parseInt(args[7]);
        long seed = Long.parseLong(args[8]);
        Duration commandTimeout = Duration.ofMillis(Long.parseLong(args[9]));
        Duration wait = Duration.ofMillis(Long.parseLong(args[10]));
        LettuceConnectionFactory semFactory = ChaosWorker.factory(args[2], Integer.parseInt(args[3]), commandTimeout);
        LettuceConnectionFactory witnessFactory = ChaosWorker.factory("127.0.0.1", Integer.parseInt(args[4]),
                Duration.ofSeconds(10));
        Witness witness = new Witness(new StringRedisTemplate(witnessFactory), permits, permits);
        SemaphoreRegistry registry = SemaphoreRegistry.builder(semFactory).redisTimeout(commandTimeout)
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2)).build();
        RedisSemaphore semaphore = registry.semaphore(args[11], SemaphoreSettings.DEFAULTS.withPermits(permits)
                .withLeaseTime(Duration.ofMillis(leaseMs)).withWhenUnavailable(WhenUnavailable.LOCAL));
        Counts counts = new Counts();
        List<Thread> loops = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random random = new Random(seed * 31 + t);
            Thread loop = new Thread(() -> run(dir, semaphore, witness, wid, wait, random, counts), "worker-" + t);
            loop.start();
            loops.add(loop);
        }
        Thread probe = new Thread(() -> probe(dir, semaphore, witness, wid, counts), "probe");
        probe.start();
        loops.add(probe);
        System.out.println("ready");
        System.out.flush();
        for (Thread loop : loops) {
            loop.join();
        }
        System.out.println("summary " + counts);
        System.out.flush();
        registry.close();
        semFactory.destroy();
        witnessFactory.destroy();
        System.exit(0);
    }

    /** What the instance's calls got. */
    static final class Counts {

        final AtomicLong throughRedis = new AtomicLong();
        final AtomicLong local = new AtomicLong();
        final AtomicLong refusedLocally = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong unavailable = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong probes = new AtomicLong();
        final AtomicLong slowestProbeMicros = new AtomicLong();
        final AtomicLong lastWasLocal = new AtomicLong();

        @Override
        public String toString() {
            return "throughRedis=" + throughRedis + " local=" + local + " refusedLocally=" + refusedLocally
                    + " refused=" + refused + " unavailable=" + unavailable + " errors=" + errors
                    + " probes=" + probes + " slowestProbeMicros=" + slowestProbeMicros;
        }
    }

    private static boolean stopped(Path dir) {
        return Files.exists(dir.resolve("stop"));
    }

    private static void run(Path dir, RedisSemaphore semaphore, Witness witness, String wid, Duration wait,
                            Random random, Counts counts) {
        while (!stopped(dir)) {
            try {
                Optional<Permit> permit = semaphore.tryAcquire(1, wait);
                if (permit.isPresent()) {
                    hold(permit.get(), witness, wid, random, counts);
                } else {
                    counts.refused.incrementAndGet();
                }
            } catch (SemaphoreUnavailableException e) {
                counts.unavailable.incrementAndGet();
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                counts.errors.incrementAndGet();
                e.printStackTrace(System.out);
            }
        }
    }

    private static void hold(Permit permit, Witness witness, String wid, Random random, Counts counts)
            throws InterruptedException {
        try {
            if (permit.isLocal()) {
                counts.local.incrementAndGet();
                counts.lastWasLocal.set(1);
            } else {
                counts.throughRedis.incrementAndGet();
                if (counts.lastWasLocal.getAndSet(0) == 1) {
                    System.out.println("redis-again " + System.currentTimeMillis());
                    System.out.flush();
                }
            }
            long validUntilMs = System.currentTimeMillis() + permit.leaseRemaining().toMillis();
            if (!witness.enter(wid, null, 1, validUntilMs)) {
                return;
            }
            try {
                long ms = permit.isLocal() && random.nextInt(6) == 0 ? 1500 : 10 + random.nextInt(51);
                Thread.sleep(ms);
            } finally {
                witness.leave(wid, null, 1);
            }
        } finally {
            permit.release();
        }
    }

    /** Times the decisions taken while the semaphore is degraded, granted or refused at once. */
    private static void probe(Path dir, RedisSemaphore semaphore, Witness witness, String wid, Counts counts) {
        Random random = new Random();
        while (!stopped(dir)) {
            try {
                Thread.sleep(20);
                boolean degraded = semaphore.localState().degraded() != null;
                long start = System.nanoTime();
                Optional<Permit> permit = semaphore.tryAcquire();
                long micros = (System.nanoTime() - start) / 1000;
                if (degraded && (permit.isEmpty() || permit.get().isLocal())) {
                    counts.probes.incrementAndGet();
                    counts.slowestProbeMicros.accumulateAndGet(micros, Math::max);
                }
                if (permit.isPresent()) {
                    hold(permit.get(), witness, wid, random, counts);
                } else {
                    counts.refusedLocally.addAndGet(degraded ? 1 : 0);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                counts.unavailable.incrementAndGet();
            }
        }
    }
}
