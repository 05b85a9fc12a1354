package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static io.github.redissemaphore.core.RaceFixture.awaitIdle;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.Engines;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Races of the engine against real Redis: deadlines, releases, cancels and interrupts crossing a
 * grant; waiters and holders that die; queue entries that vanish. Registries use the builder's
 * defaults (waiter tick 1 s, waiter heartbeat 5 s) unless a test says otherwise; each registry on a
 * connection factory of its own stands for a separate JVM.
 */
@Tag("slow")
@RedisTest
class EngineRaceTest {

    /** The builder's defaults, which the timing bounds below are stated in. */
    private static final Duration TICK = Duration.ofSeconds(1);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    /** When the holders release, relative to the moment the waits end (ms). */
    private static final long[] RELEASE_OFFSETS_MS = {-30, -10, -5, 0, 2, 5, 10, 20};

    private final RedisServer server;
    /** Registries, pools, the scheduling noise (which widens the hand-off bound) and the clean-up checks. */
    private final RaceFixture fixture;
    /** The shared server's: the registries here write no other key, on it or on a dedicated one. */
    private final String prefix;
    private final SchedulingNoise noise;
    private String name;

    EngineRaceTest(RedisServer server) {
        this.server = server;
        this.fixture = new RaceFixture(server);
        this.prefix = fixture.prefix();
        this.noise = fixture.noise();
    }

    @BeforeEach
    void nameAfterTest(TestInfo test) {
        name = RaceFixture.nameAfter(test);
    }

    @AfterEach
    void closeAll() {
        fixture.close();
    }

    // --- a. deadlines crossing grants ---------------------------------------------------------------

    @Test
    @Timeout(60)
    void waitsEndingAsPermitsAreReleasedEachEndWithAPermitOrARejectionAndNothingLeaks() throws Exception {
        int permits = 5;
        int jvmCount = 4;
        int perJvm = 50;
        int rounds = 12;
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(permits);
        List<RedisSemaphore> jvms = new ArrayList<>();
        for (int i = 0; i < jvmCount; i++) {
            jvms.add(fixture.registry(server.connectionFactory()).semaphore(name, settings));
        }
        ExecutorService callers = fixture.pool(jvmCount);
        ExecutorService releasers = fixture.pool(4);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        fixture.closeAfter(timer);
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        int granted = 0;
        int rejected = 0;
        long started = System.nanoTime();

        for (int round = 0; round < rounds; round++) {
            RedisSemaphore holderJvm = jvms.get(round % jvmCount);
            List<Permit> holders = new ArrayList<>();
            for (int i = 0; i < permits; i++) {
                holders.add(holderJvm.tryAcquire().orElseThrow(() -> new AssertionError("a permit leaked")));
            }
            // Every wait ends at the same moment, ~1 s from now, whenever its call starts.
            long waitsEnd = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            List<CompletableFuture<CompletableFuture<String>>> enqueued = new ArrayList<>();
            for (RedisSemaphore jvm : jvms) {
                enqueued.add(CompletableFuture.supplyAsync(() -> {
                    List<CompletableFuture<String>> outcomes = new ArrayList<>();
                    for (int i = 0; i < perJvm; i++) {
                        Duration wait = Duration.ofNanos(Math.max(waitsEnd - System.nanoTime(),
                                Duration.ofMillis(50).toNanos()));
                        outcomes.add(outcome(jvm.acquireAsync(1, wait), releasers, errors));
                    }
                    return CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new))
                            .thenApply(done -> outcomes.stream().map(CompletableFuture::join).toList())
                            .thenApply(all -> String.join(",", all));
                }, callers));
            }
            // The holders give their permits back around the moment the waits end (each wait's timer
            // starts once its call is answered, so a little after), a different offset each round.
            long offsetMillis = RELEASE_OFFSETS_MS[round % RELEASE_OFFSETS_MS.length];
            long releaseIn = waitsEnd + Duration.ofMillis(offsetMillis).toNanos() - System.nanoTime();
            CompletableFuture<Void> released = new CompletableFuture<>();
            timer.schedule(() -> {
                try {
                    holders.forEach(Permit::release);
                    released.complete(null);
                } catch (RuntimeException e) {
                    released.completeExceptionally(e);
                }
            }, Math.max(releaseIn, 0), TimeUnit.NANOSECONDS);

            int roundGranted = 0;
            int roundRejected = 0;
            for (CompletableFuture<CompletableFuture<String>> jvm : enqueued) {
                String all = jvm.get(20, TimeUnit.SECONDS).get(20, TimeUnit.SECONDS);
                for (String outcome : all.split(",")) {
                    if (outcome.equals("granted")) {
                        roundGranted++;
                    } else if (outcome.equals("rejected")) {
                        roundRejected++;
                    }
                }
            }
            released.get(10, TimeUnit.SECONDS);
            assertThat(roundGranted + roundRejected).as("round %s: every caller got a permit or a rejection; errors %s",
                    round, errors).isEqualTo(jvmCount * perJvm);
            granted += roundGranted;
            rejected += roundRejected;
            System.out.printf("deadline race round %d (release at %+d ms): %d granted, %d rejected%n", round,
                    offsetMillis, roundGranted, roundRejected);
            awaitIdle(jvms.get(0), "after round " + round);
        }
        long ended = System.nanoTime();
        long tookMillis = Duration.ofNanos(ended - started).toMillis();
        System.out.printf("deadline race: %d rounds of %d waiters in %d ms: %d granted, %d rejected%n", rounds,
                jvmCount * perJvm, tookMillis, granted, rejected);
        assertThat(errors).as("errors that reached callers").isEmpty();
        assertThat(granted).isGreaterThan(0);
        assertThat(rejected).isGreaterThan(0);
        noise.assertTookLessThan("the deadline race", started, ended, Duration.ofSeconds(40));
        assertCleanKeys(permits);
    }

    /** "granted" (and the permit released), "rejected", or "error" (recorded). */
    private static CompletableFuture<String> outcome(CompletableFuture<Permit> acquisition, ExecutorService releasers,
                                                     List<String> errors) {
        return acquisition.thenApplyAsync(permit -> {
            permit.release();
            return "granted";
        }, releasers).exceptionally(error -> {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof SemaphoreRejectedException) {
                return "rejected";
            }
            errors.add(cause.toString());
            return "error";
        });
    }

    // --- b. a waiter JVM killed at the head of the queue ----------------------------------------------

    @Test
    @Timeout(90)
    void aSigkilledWaiterJvmAtTheHeadOfTheQueueDelaysTheNextWaiterByAtMostHeartbeatPlusTick() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(1).withLeaseTime(Duration.ofSeconds(30));
        RedisSemaphore holderJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        RedisSemaphore nextJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        Path log = Files.createTempFile("race-waiter-", ".log");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // a short life: start-up costs most
                "-cp", System.getProperty("java.class.path"), WaiterProcess.class.getName(),
                server.host(), String.valueOf(server.port()), prefix, name, "1", "1", "30000",
                String.valueOf(HEARTBEAT.toMillis()), String.valueOf(TICK.toMillis()), "120000")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            String childPid = "/" + child.pid() + "/";
            try {
                await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(100))
                        .failFast("the waiter JVM exited", () -> !child.isAlive())
                        .until(() -> holderJvm.state().waiters().stream()
                                .anyMatch(w -> w.owner().contains(childPid)));
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("the waiter JVM did not join the queue; its output:\n" + read(log), e);
            }
            CompletableFuture<Permit> next = nextJvm.acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> holderJvm.state().waiters().size() == 2);
            assertThat(holderJvm.state().waiters().get(0).owner()).contains(childPid);
            // Stamped by the thread that completes the wait, the moment it does.
            CompletableFuture<Long> servedAt = next.thenApply(permit -> System.nanoTime());

            child.destroyForcibly();
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
            long releasedAt = System.nanoTime();
            held.release();

            // The release hands the permit to the dead head as a claim (the heartbeat, 5 s); nobody
            // confirms it, so it ends and the next waiter gets the permit.
            Permit permit = next.get(20, TimeUnit.SECONDS);
            long delayMillis = Duration.ofNanos(servedAt.get(10, TimeUnit.SECONDS) - releasedAt).toMillis();
            System.out.printf("dead waiter delay: %d ms (heartbeat %d ms, tick %d ms)%n", delayMillis,
                    HEARTBEAT.toMillis(), TICK.toMillis());
            assertThat(permit.isHeld()).isTrue();
            assertThat(delayMillis).as("from the release to the grant of the waiter behind the dead one")
                    .isNotNegative().isLessThan(HEARTBEAT.plus(TICK).plusMillis(1500).toMillis());
            permit.release();
        } finally {
            child.destroyForcibly();
            Files.deleteIfExists(log);
        }
        awaitIdle(holderJvm, "at the end");
        assertCleanKeys(1);
    }

    // --- c. queue entries that vanish under live waiters ----------------------------------------------

    @Test
    @Timeout(60)
    void waitersWhoseQueueEntriesWereDeletedAreStillServedWithinTheirWait() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(2);
        RedisSemaphore a = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        RedisSemaphore b = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        StringRedisTemplate redis = new StringRedisTemplate(server.connectionFactory());
        SemaphoreKeys keys = SemaphoreKeys.of(prefix, name);
        ExecutorService releasers = fixture.pool(2);

        // 1. Deleted while the permits are held: the waiters re-join, then a release serves them.
        List<Permit> holders = List.of(a.tryAcquire().orElseThrow(), a.tryAcquire().orElseThrow());
        Duration wait = Duration.ofSeconds(20);
        List<CompletableFuture<Long>> served = waiters(List.of(a, b), 5, wait, releasers);
        await().until(() -> a.state().waiters().size() == 10);
        assertThat(redis.delete(keys.all().get(2))).isTrue();
        // Each JVM finds its entries gone at its next tick and re-joins, at the back.
        await().atMost(HEARTBEAT).until(() -> a.state().waiters().size() == 10);
        holders.forEach(Permit::release);
        assertAllServedWithin(served, wait);
        awaitIdle(a, "after phase 1");

        // 2. Deleted and the permits released at once: the free permits are found by the re-joins.
        holders = List.of(b.tryAcquire().orElseThrow(), b.tryAcquire().orElseThrow());
        served = waiters(List.of(a, b), 5, wait, releasers);
        await().until(() -> a.state().waiters().size() == 10);
        assertThat(redis.delete(keys.all().get(2))).isTrue();
        holders.forEach(Permit::release);
        assertAllServedWithin(served, wait);
        awaitIdle(a, "after phase 2");
        assertCleanKeys(2);
    }

    @Test
    @Timeout(90)
    void waitersAreServedWithinTheirWaitAfterRedisRestartedWithoutData(@Dedicated RedisServer dedicated)
            throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(2);
        RedisSemaphore a = fixture.registry(dedicated.connectionFactory()).semaphore(name, settings);
        RedisSemaphore b = fixture.registry(dedicated.connectionFactory()).semaphore(name, settings);
        ExecutorService releasers = fixture.pool(2);
        List<Permit> holders = List.of(a.tryAcquire().orElseThrow(), a.tryAcquire().orElseThrow());
        Duration wait = Duration.ofSeconds(30);
        List<CompletableFuture<Long>> served = waiters(List.of(a, b), 5, wait, releasers);
        await().until(() -> a.state().waiters().size() == 10);

        String runId = runId(dedicated);
        dedicated.stop();
        dedicated.start();
        // A new process, started without persistence (RedisProcess: no RDB, no AOF): it has no data.
        assertThat(runId(dedicated)).isNotEqualTo(runId);

        // Redis lost the queue (and the holders' leases): the waiters re-join and are served.
        assertAllServedWithin(served, wait);
        holders.forEach(Permit::release);
        awaitIdle(a, "after the restart");
        assertThat(ScriptSnapshot.take(dedicated.connectionFactory(), SemaphoreKeys.of(prefix, name)).violations(2))
                .isEmpty();
    }

    private static String runId(RedisServer server) {
        return server.info("server").lines().filter(line -> line.startsWith("run_id:")).findFirst().orElseThrow();
    }

    /** perJvm waiters on each semaphore; each future gives how long its wait took, once its permit is released. */
    private static List<CompletableFuture<Long>> waiters(List<RedisSemaphore> jvms, int perJvm, Duration wait,
                                                         ExecutorService releasers) {
        List<CompletableFuture<Long>> served = new ArrayList<>();
        for (RedisSemaphore jvm : jvms) {
            for (int i = 0; i < perJvm; i++) {
                long start = System.nanoTime();
                served.add(jvm.acquireAsync(1, wait).thenApplyAsync(permit -> {
                    long took = System.nanoTime() - start;
                    permit.release();
                    return took;
                }, releasers));
            }
        }
        return served;
    }

    private static void assertAllServedWithin(List<CompletableFuture<Long>> served, Duration wait) throws Exception {
        for (CompletableFuture<Long> waiter : served) {
            long took = waiter.get(wait.toMillis() + 10_000, TimeUnit.MILLISECONDS);
            assertThat(Duration.ofNanos(took)).isLessThan(wait);
        }
    }

    // --- d. a crashed holder ---------------------------------------------------------------------------

    @Test
    @Timeout(60)
    void aCrashedHoldersPermitGoesToAWaiterOfAnotherJvmWithin100MsOfItsLeaseEnd() throws Exception {
        Duration lease = Duration.ofSeconds(1);
        // The holder does not renew: its crash (halt) must come before a renewal would, which on a
        // loaded machine a 333 ms renewal tick cannot promise. Without renewal the lease is exactly
        // the 1 s from its grant, which is what this test measures against.
        SemaphoreSettings holderSettings = SemaphoreSettings.DEFAULTS.withLeaseTime(lease).withAutoRenew(false);
        RedisSemaphore waiterJvm = fixture.registry(server.connectionFactory())
                .semaphore(name, SemaphoreSettings.DEFAULTS);
        List<Long> delays = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            SemaphoreRegistry crashing = fixture.registry(server.connectionFactory());
            RedisSemaphore holderJvm = crashing.semaphore(name, holderSettings);
            long beforeGrant = System.nanoTime();
            Permit held = holderJvm.tryAcquire().orElseThrow();
            Engines.halt(crashing);

            CompletableFuture<Permit> next = waiterJvm.acquireAsync(1, Duration.ofSeconds(10));
            // Stamped by the thread that completes the wait, the moment it does.
            CompletableFuture<Long> servedAt = next.thenApply(permit -> System.nanoTime());
            Permit permit = next.get(10, TimeUnit.SECONDS);

            long served = servedAt.get(10, TimeUnit.SECONDS);
            long fromGrant = Duration.ofNanos(served - beforeGrant).toMillis();
            long late = noise.during(beforeGrant, served).toMillis();
            // Fencing tokens are at least the server clock in µs: their difference is the server's view.
            long serverMillis = (permit.fencingToken() - held.fencingToken()) / 1000;
            System.out.printf("expiry hand-off delay: %d ms past the deadline (%d ms from the holder's grant to"
                    + " the waiter's; server tokens say %d ms past; a 10 ms JDK timer ran up to %d ms late"
                    + " meanwhile)%n", fromGrant - lease.toMillis(), fromGrant, serverMillis - lease.toMillis(), late);
            delays.add(fromGrant - lease.toMillis());
            // Within 100 ms, plus however late the machine let any timer of this JVM run meanwhile.
            assertThat(fromGrant).as("from the crashed holder's grant to the next waiter's grant")
                    .isGreaterThanOrEqualTo(lease.toMillis()).isLessThan(lease.toMillis() + 100 + late);
            permit.release();
            awaitIdle(waiterJvm, "after hand-off " + i);
        }
        System.out.println("expiry hand-off delays past the deadline (ms): " + delays);
    }

    // --- e. cancel and interrupt crossing a grant --------------------------------------------------------

    @Test
    @Timeout(90)
    void aWaiterCancelledOrInterruptedAsAReleaseHandsItThePermitLeaksNothing() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(1);
        RedisSemaphore holderJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        RedisSemaphore waiterJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        ExecutorService racers = fixture.pool(2);
        Random random = new Random();
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger abandoned = new AtomicInteger();
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        int iterations = 300;
        long started = System.nanoTime();

        for (int i = 0; i < iterations; i++) {
            Permit held = holderJvm.tryAcquire().orElseThrow(() -> new AssertionError("a permit leaked"));
            boolean interrupt = i % 2 == 1;
            // Who goes first, and by how much (0..2.5 ms of spinning, about a hand-off), changes every iteration.
            boolean releaseFirst = random.nextBoolean();
            long jitterNanos = random.nextInt(2_500_000);
            CountDownLatch go = new CountDownLatch(1);
            Runnable stop;
            CompletableFuture<Permit> future = null;
            Thread waiter = null;
            AtomicReference<Object> result = new AtomicReference<>();
            if (interrupt) {
                Thread thread = new Thread(() -> {
                    try {
                        result.set(waiterJvm.tryAcquire(Duration.ofSeconds(30)));
                    } catch (InterruptedException e) {
                        result.set(e);
                    } catch (Throwable e) {
                        result.set(e);
                    }
                }, "race-waiter-" + i);
                thread.start();
                waiter = thread;
                // Queued in Redis, and the caller parked in its wait for the permit (the only untimed
                // wait on its path: the Redis calls wait with a timeout). An interrupt while the acquire
                // call itself is in flight is another case, see anInterruptDuringTheAcquireCall...
                await().pollInterval(Duration.ofMillis(2)).until(() -> thread.getState() == Thread.State.WAITING
                        && holderJvm.state().waiters().size() == 1);
                stop = thread::interrupt;
            } else {
                CompletableFuture<Permit> acquisition = waiterJvm.acquireAsync(1, Duration.ofSeconds(30));
                future = acquisition;
                stop = () -> acquisition.cancel(true);
            }
            Future<?> release = racers.submit(() -> {
                go.await();
                if (!releaseFirst) {
                    spin(jitterNanos);
                }
                held.release();
                return null;
            });
            Runnable stopper = stop;
            Future<?> cancel = racers.submit(() -> {
                go.await();
                if (releaseFirst) {
                    spin(jitterNanos);
                }
                stopper.run();
                return null;
            });
            go.countDown();
            release.get(10, TimeUnit.SECONDS);
            cancel.get(10, TimeUnit.SECONDS);

            if (interrupt) {
                waiter.join(10_000);
                assertThat(waiter.isAlive()).as("iteration %s: the interrupted waiter returned", i).isFalse();
                Object outcome = result.get();
                if (outcome instanceof Optional<?> permit && permit.isPresent()) {
                    ((Permit) permit.get()).release();
                    granted.incrementAndGet();
                } else if (outcome instanceof InterruptedException) {
                    abandoned.incrementAndGet();
                } else {
                    errors.add("iteration " + i + " (interrupt): " + outcome);
                }
            } else {
                try {
                    future.get(10, TimeUnit.SECONDS).release();
                    granted.incrementAndGet();
                } catch (CancellationException e) {
                    abandoned.incrementAndGet();
                } catch (Exception e) {
                    errors.add("iteration " + i + " (cancel): " + e);
                }
            }
            awaitIdle(holderJvm, "after iteration " + i);
        }
        System.out.printf("cancel/interrupt race: %d iterations in %d ms: %d got the permit, %d gave up%n", iterations,
                Duration.ofNanos(System.nanoTime() - started).toMillis(), granted.get(), abandoned.get());
        assertThat(errors).isEmpty();
        assertThat(granted.get() + abandoned.get()).isEqualTo(iterations);
        assertCleanKeys(1);
        Permit last = waiterJvm.tryAcquire().orElseThrow();
        last.release();
    }

    @Test
    @Timeout(60)
    void anInterruptDuringTheAcquireCallIsReportedAsAnInterruptAndLeavesNothingInTheQueue() throws Exception {
        // The caller's thread is interrupted before it asks (or, the same thing for the engine, while
        // its acquire call is in flight): the call may still reach Redis and queue it.
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(1);
        RedisSemaphore holderJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        RedisSemaphore waiterJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        for (int i = 0; i < 20; i++) {
            Object result = tryAcquireInterrupted(waiterJvm, "interrupted-caller-" + i);
            assertThat(result).as("outcome of an interrupted tryAcquire (iteration %s): %s", i, result)
                    .isInstanceOf(InterruptedException.class);
            // Whatever the call left in Redis is taken back: the queue empties, and stays empty.
            await().atMost(Duration.ofSeconds(3)).until(() -> holderJvm.state().waiters().isEmpty());
        }
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                .until(() -> holderJvm.state().waiters().isEmpty());
        held.release();
        awaitIdle(holderJvm, "at the end");
        assertCleanKeys(1);
    }

    /**
     * The first call of a registry lends its connection off the caller's thread, and so does the
     * clean-up of an interrupted one: the clean-up must not overtake the call it cleans up after
     * (an acquire landing after its cancel would queue a waiter nobody waits for, blocking the
     * queue until its heartbeat lapses). A fresh registry each time, so every call is a first one.
     */
    @Test
    @Timeout(120)
    void theCleanUpOfAnInterruptedFirstCallNeverOvertakesTheCall() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(1);
        RedisSemaphore holderJvm = fixture.registry(server.connectionFactory()).semaphore(name, settings);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        for (int i = 0; i < 30; i++) {
            // a waiter heartbeat far longer than the wait below: only the clean-up can empty the queue in time,
            // and the wait can allow for a busy machine
            try (SemaphoreRegistry fresh = fixture.registry(server.connectionFactory(),
                    builder -> builder.waiterHeartbeat(Duration.ofSeconds(60)))) {
                Object result = tryAcquireInterrupted(fresh.semaphore(name, settings), "interrupted-first-caller-" + i);
                assertThat(result).as("outcome of an interrupted first tryAcquire (iteration %s): %s", i, result)
                        .isInstanceOf(InterruptedException.class);
                await().atMost(Duration.ofSeconds(15)).until(() -> holderJvm.state().waiters().isEmpty());
            }
        }
        held.release();
        awaitIdle(holderJvm, "at the end");
        assertCleanKeys(1);
    }

    /**
     * @return what {@code tryAcquire(30 s)} gave, or threw, on a thread of that name interrupted
     *         before it asked (the same, for the engine, as an interrupt while its call is in flight)
     */
    private static Object tryAcquireInterrupted(RedisSemaphore semaphore, String threadName)
            throws InterruptedException {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                result.set(semaphore.tryAcquire(Duration.ofSeconds(30)));
            } catch (Throwable e) {
                result.set(e);
            }
        }, threadName);
        caller.start();
        caller.join(10_000);
        return result.get();
    }

    private static void spin(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    // --- close() crossing a wait that is starting ------------------------------------------------------

    /**
     * close() while a blocking wait is starting on another thread (its acquire call in flight):
     * the wait is answered at once, never left blocked on a deadline a stopped scheduler would
     * never run, and nothing of it stays in the queue. Found by {@link ModelBasedTest}.
     */
    @Test
    @Timeout(120)
    void closeCrossingAWaitThatIsStartingAnswersItAndLeavesNothing() throws Exception {
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS;
        RedisSemaphore holder = fixture.registry(server.connectionFactory()).semaphore(name, one);
        Permit held = holder.tryAcquire().orElseThrow();
        Random random = new Random(7);
        RedisConnectionFactory jvm = server.connectionFactory();
        for (int i = 0; i < 150; i++) {
            SemaphoreRegistry closing = SemaphoreRegistry.builder(jvm).keyPrefix(prefix).build();
            CompletableFuture<Object> answer = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    answer.complete(closing.semaphore(name, one).tryAcquire(1, Duration.ofSeconds(30)));
                } catch (Throwable e) {
                    answer.complete(e);
                }
            });
            caller.setDaemon(true);
            caller.start();
            long until = System.nanoTime() + random.nextInt(4_000_000);
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            closing.close();
            assertThat(answer.get(10, TimeUnit.SECONDS)).as("iteration %d", i)
                    .isInstanceOf(SemaphoreUnavailableException.class);
            assertThat(holder.state().waiters()).as("iteration %d", i).isEmpty();
        }
        held.release();
        awaitIdle(holder, "after the closes");
    }

    /** The keys of the test's semaphore keep the invariants, and nothing is left in them. */
    private void assertCleanKeys(int limit) {
        assertThat(fixture.assertCleanKeys(name, limit).info()).as("info left behind").isEmpty();
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
