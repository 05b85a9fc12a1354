package io.github.redissemaphore.chaos;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.test.SchedulingNoise;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;

/**
 * One chaos JVM, started by {@link ChaosTest} as a child process and killed with SIGKILL at random.
 * Its threads loop: {@code tryAcquire(n, wait)}, enter the witness, hold a random time (checking
 * {@code isHeld()} every few ms), leave the witness, release. Of a capped semaphore, each call
 * picks one of its keys ({@code k0}, {@code k1}, ...) at random, and the witness counts per key
 * too. Every call, grant, release and lost notice is written to {@code events-<wid>.log} in the run
 * directory (flushed every 50 ms, so a SIGKILL loses at most the last 50 ms of it, and cuts at most
 * its last line). A call's line carries how late a 10 ms JDK timer of this JVM ran while the call
 * did ({@link SchedulingNoise}), measured only for a call that took longer than its wait and the
 * command timeout together (else 0), so the parent widens its bound by the machine's lateness alone.
 *
 * <p>Control files in the run directory: {@code quiesce} (finish the current call, keep what is
 * held, write {@code quiesced-<wid>} with the ids held: "id count[ key]" a line), {@code stop}
 * (release, close, exit).
 *
 * <p>Arguments: runDir wid semHost semPort witnessPort permits leaseMs threads seed commandTimeoutMs
 * semaphoreName longHoldPercent totalPermits keys (the last two 0 for a semaphore without a cap;
 * permits is then each key's).
 */
public final class ChaosWorker {

    private static final Object LOG_LOCK = new Object();
    private static BufferedWriter log;
    /** How late this JVM lets a timer run: the allowance of a call that overran. */
    private static final SchedulingNoise NOISE = new SchedulingNoise();
    private static long commandTimeoutNanos;

    private ChaosWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        String wid = args[1];
        String semHost = args[2];
        int semPort = Integer.parseInt(args[3]);
        int witnessPort = Integer.parseInt(args[4]);
        int permits = Integer.parseInt(args[5]);
        long leaseMs = Long.parseLong(args[6]);
        int threads = Integer.parseInt(args[7]);
        long seed = Long.parseLong(args[8]);
        Duration commandTimeout = Duration.ofMillis(Long.parseLong(args[9]));
        commandTimeoutNanos = commandTimeout.toNanos();
        String name = args[10];
        int longHoldPercent = Integer.parseInt(args[11]);
        int totalPermits = Integer.parseInt(args[12]);
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < Integer.parseInt(args[13]); k++) {
            keys.add("k" + k);
        }

        log = Files.newBufferedWriter(dir.resolve("events-" + wid + ".log"), StandardCharsets.UTF_8);
        Thread flusher = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(50);
                    synchronized (LOG_LOCK) {
                        log.flush();
                    }
                } catch (InterruptedException | IOException e) {
                    return;
                }
            }
        }, "flusher");
        flusher.setDaemon(true);
        flusher.start();

        LettuceConnectionFactory semFactory = factory(semHost, semPort, commandTimeout);
        LettuceConnectionFactory witnessFactory = factory("127.0.0.1", witnessPort, Duration.ofSeconds(10));
        Witness witness = new Witness(new StringRedisTemplate(witnessFactory),
                totalPermits == 0 ? permits : totalPermits, permits);
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(permits)
                .withLeaseTime(Duration.ofMillis(leaseMs)).withTotalPermits(totalPermits);
        SemaphoreRegistry registry = SemaphoreRegistry.builder(semFactory)
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2)).build();
        // A capped semaphore is taken per key, as a service takes it per tenant: looked up for each
        // call (the registry forgets keys nobody here uses, and hands them out anew).
        Keyed one = keys.isEmpty() ? new Keyed(null, registry.semaphore(name, settings)) : null;
        Semaphores semaphores = one != null ? random -> one
                : random -> {
                    String key = keys.get(random.nextInt(keys.size()));
                    return new Keyed(key, registry.semaphore(name, key, settings));
                };

        AtomicBoolean quiesce = new AtomicBoolean();
        Map<Permit, Held> heldAtQuiesce = new ConcurrentHashMap<>();
        List<Thread> loops = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random random = new Random(seed * 31 + t);
            Thread loop = new Thread(() -> run(semaphores, witness, wid, permits, random, quiesce, heldAtQuiesce,
                    longHoldPercent, leaseMs), "chaos-" + wid + "-" + t);
            loop.setDaemon(true);
            loops.add(loop);
        }
        write("S " + ProcessHandle.current().pid() + " " + System.currentTimeMillis());
        System.out.println("ready");
        System.out.flush();
        loops.forEach(Thread::start);

        while (!Files.exists(dir.resolve("quiesce"))) {
            Thread.sleep(50);
        }
        quiesce.set(true);
        for (Thread loop : loops) {
            loop.join();
        }
        StringBuilder held = new StringBuilder();
        heldAtQuiesce.forEach((permit, kept) -> held.append(permit.id()).append(' ').append(permit.count())
                .append(kept.key() == null ? "" : " " + kept.key()).append('\n'));
        Path tmp = dir.resolve("quiesced-" + wid + ".tmp");
        Files.writeString(tmp, held.toString());
        Files.move(tmp, dir.resolve("quiesced-" + wid));
        while (!Files.exists(dir.resolve("stop"))) {
            Thread.sleep(50);
        }
        heldAtQuiesce.forEach((permit, kept) -> {
            if (kept.inside().compareAndSet(true, false)) {
                witness.leave(wid, kept.key(), permit.count());
            }
            long at = System.currentTimeMillis();
            permit.release();
            write("X " + permit.id() + " " + at);
        });
        registry.close();
        synchronized (LOG_LOCK) {
            log.flush();
        }
        semFactory.destroy();
        witnessFactory.destroy();
        System.exit(0);
    }

    /** The semaphore of the next call: the one, or of a capped semaphore one of its keys. */
    private interface Semaphores {
        Keyed next(Random random);
    }

    /** A semaphore and its key (null when uncapped). */
    private record Keyed(String key, RedisSemaphore semaphore) {
    }

    /** A permit kept at the quiesce: its key (null when uncapped), and whether the witness counts it inside. */
    private record Held(String key, AtomicBoolean inside) {
    }

    private static void run(Semaphores semaphores, Witness witness, String wid, int permits, Random random,
            AtomicBoolean quiesce, Map<Permit, Held> heldAtQuiesce, int longHoldPercent, long leaseMs) {
        while (!quiesce.get()) {
            Keyed keyed = semaphores.next(random);
            RedisSemaphore semaphore = keyed.semaphore();
            String key = keyed.key();
            int n = permits > 1 && random.nextInt(10) == 0 ? 2 : 1;
            long waitMs = random.nextInt(4) == 0 ? 0 : 100 + random.nextInt(1400);
            long startMs = System.currentTimeMillis();
            long startNanos = System.nanoTime();
            Optional<Permit> got;
            String outcome;
            try {
                got = semaphore.tryAcquire(n, Duration.ofMillis(waitMs));
                outcome = got.isPresent() ? "G" : "R";
            } catch (SemaphoreUnavailableException e) {
                got = Optional.empty();
                outcome = "U";
            } catch (RuntimeException e) {
                got = Optional.empty();
                outcome = "E";
                System.out.println("call failed: " + e);
            } catch (InterruptedException e) {
                return;
            }
            long endNanos = System.nanoTime();
            long took = endNanos - startNanos;
            long lateMs = took > Math.max(waitMs * 1_000_000, commandTimeoutNanos) + commandTimeoutNanos
                    ? NOISE.during(startNanos, endNanos).toMillis() : 0;
            if (got.isEmpty()) {
                write("C " + startMs + " " + took + " " + waitMs + " " + lateMs + " " + outcome + " " + n);
                if (outcome.equals("U") || outcome.equals("E")) {
                    sleep(20 + random.nextInt(50));
                }
                continue;
            }
            Permit permit = got.get();
            long grantMs = System.currentTimeMillis();
            write("C " + startMs + " " + took + " " + waitMs + " " + lateMs + " G " + n + " " + permit.id() + " "
                    + grantMs + " "
                    + permit.fencingToken() + (key == null ? "" : " " + key));
            AtomicBoolean inside = new AtomicBoolean(false);
            permit.onLost(p -> {
                write("L " + p.id() + " " + System.currentTimeMillis());
                if (inside.compareAndSet(true, false)) {
                    witness.leave(wid, key, n);
                }
            });
            // A well-behaved holder starts its work only while its lease lasts: the witness counts it
            // inside only if the enter reaches it before the lease ends as this JVM measures it (a
            // process stalled between the grant and the work would otherwise start too late).
            long validUntilMs = System.currentTimeMillis() + permit.leaseRemaining().toMillis();
            if (!permit.isHeld() || !witness.enter(wid, key, n, validUntilMs)) {
                write("N " + permit.id() + " " + System.currentTimeMillis());
                permit.release();
                continue;
            }
            inside.set(true);
            long holdMs = random.nextInt(100) < longHoldPercent
                    ? leaseMs / 3 + random.nextInt((int) (2 * leaseMs))
                    : random.nextInt(15);
            long until = System.nanoTime() + holdMs * 1_000_000;
            // A well-behaved holder stops working the moment its lease is no longer held.
            while (System.nanoTime() - until < 0 && permit.isHeld()) {
                sleep(Math.min(5, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
            }
            if (!permit.isHeld() && inside.compareAndSet(true, false)) {
                write("N " + permit.id() + " " + System.currentTimeMillis());
                witness.leave(wid, key, n);
            }
            if (quiesce.get() && inside.get()) {
                heldAtQuiesce.put(permit, new Held(key, inside));
                return;
            }
            if (inside.compareAndSet(true, false)) {
                witness.leave(wid, key, n);
            }
            long at = System.currentTimeMillis();
            permit.release();
            write("X " + permit.id() + " " + at);
        }
    }

    static void write(String line) {
        synchronized (LOG_LOCK) {
            try {
                log.write(line);
                log.write('\n');
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static LettuceConnectionFactory factory(String host, int port, Duration commandTimeout) {
        ClientOptions options = ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build()).build();
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
                LettuceClientConfiguration.builder().commandTimeout(commandTimeout).clientOptions(options)
                        .shutdownTimeout(Duration.ofMillis(100)).shutdownQuietPeriod(Duration.ZERO).build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
