package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Waiting on a single Redis server: timeouts, interrupts, dead and lost peers, load. */
@RedisTest
class WaitingBehaviourTest extends SemaphoreTestBase {

    /** The machine's scheduling noise while the test runs, which widens the bounds timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopNoise() {
        noise.close();
    }

    private final RedisServer server;

    WaitingBehaviourTest(RedisServer server) {
        super(new StandaloneTarget(server));
        this.server = server;
    }

    @Test
    void aTimedOutWaitReturnsEmptyAndLeavesNothingInTheQueue() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name);
        Permit held = semaphore.tryAcquire().orElseThrow();

        long start = System.nanoTime();
        Optional<Permit> none = semaphore.tryAcquire(Duration.ofMillis(200));
        long end = System.nanoTime();
        long waitedMillis = Duration.ofNanos(end - start).toMillis();

        assertThat(none).isEmpty();
        assertThat(waitedMillis).isGreaterThanOrEqualTo(190L);
        noise.assertTookLessThan("tryAcquire(200ms) on a full semaphore", start, end, Duration.ofSeconds(5));
        assertThat(semaphore.state().waiters()).isEmpty();
        held.release();
        assertThat(semaphore.state().used()).isZero();
    }

    @Test
    void acquireThrowsARejectionNamingTheSemaphoreAfterTheConfiguredWait() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name,
                SemaphoreSettings.DEFAULTS.withWaitTime(Duration.ofMillis(100)));
        Permit held = semaphore.acquire();

        assertThat(org.assertj.core.api.Assertions.catchThrowable(semaphore::acquire))
                .isInstanceOfSatisfying(SemaphoreRejectedException.class, e -> {
                    assertThat(e.getSemaphoreName()).isEqualTo(name);
                    assertThat(e.getRequestedPermits()).isEqualTo(1);
                    assertThat(e.getWaited()).isEqualTo(Duration.ofMillis(100));
                });
        held.release();
    }

    @Test
    void anInterruptedWaiterLeavesTheQueueAndLeaksNothing() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name);
        Permit held = semaphore.tryAcquire().orElseThrow();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                outcome.set(new AssertionError("got " + semaphore.tryAcquire(Duration.ofSeconds(30))));
            } catch (InterruptedException e) {
                outcome.set(e);
            }
        });
        waiter.start();
        await().until(() -> semaphore.state().waiters().size() == 1);

        waiter.interrupt();
        waiter.join(10_000);

        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        assertThat(semaphore.state().waiters()).isEmpty();
        held.release();
        assertThat(semaphore.state().used()).isZero();
        assertThat(semaphore.tryAcquire()).isPresent();
    }

    @Test
    void cancellingAnAsyncWaitLeavesTheQueue() {
        RedisSemaphore semaphore = newRegistry().semaphore(name);
        Permit held = semaphore.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> semaphore.state().waiters().size() == 1);

        waiter.cancel(false);

        await().until(() -> semaphore.state().waiters().isEmpty());
        held.release();
        assertThat(semaphore.state().used()).isZero();
    }

    @Test
    void aWaiterWhoseJvmWasKilledStopsBlockingTheQueueWithinItsHeartbeat() throws Exception {
        SemaphoreSettings two = SemaphoreSettings.DEFAULTS.withPermits(2);
        RedisSemaphore semaphore = newRegistry().semaphore(name, two);
        Permit held = semaphore.tryAcquire().orElseThrow();
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // a short life: start-up costs most
                "-cp", System.getProperty("java.class.path"), WaiterProcess.class.getName(),
                server.host(), String.valueOf(server.port()), server.keyPrefix(), name, "2", "2", "30000", "2000",
                "200", "300000")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String childPid = "/" + child.pid() + "/";
            // The other JVM waits for both permits, at the head of the queue.
            await().atMost(Duration.ofSeconds(30)).until(() -> semaphore.state().waiters().stream()
                    .anyMatch(waiter -> waiter.owner().contains(childPid)));
            CompletableFuture<Permit> behind = semaphore.acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> semaphore.state().waiters().size() == 2);
            assertThat(behind).isNotDone();

            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            long killed = System.nanoTime();

            // Its heartbeat (2 s) lapses, it drops out, and the waiter behind it gets the free permit.
            Permit served = behind.get(10, TimeUnit.SECONDS);
            noise.assertTookLessThan("served after the waiter ahead died", killed, System.nanoTime(),
                    Duration.ofSeconds(4));
            assertThat(semaphore.state().waiters()).isEmpty();
            served.release();
        } finally {
            child.destroyForcibly();
        }
        held.release();
    }

    @Test
    void aGrantWhoseMessageIsLostIsFoundByTheNextTick() throws Exception {
        RedisSemaphore holderJvm = newRegistry().semaphore(name);
        RedisSemaphore waiterJvm = newRegistry().semaphore(name);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> holderJvm.state().waiters().size() == 1);

        // Point the waiter's inbox nowhere while the grant is published: the message is certainly
        // lost. The record is put back at once: the inbox also says which JVM owns the lease (an
        // adoption changes it), and the waiter's JVM must still be its owner when its tick asks.
        StringRedisTemplate redis = new StringRedisTemplate(server.connectionFactory());
        String infoKey = server.keyPrefix() + ":{" + name + "}:state";
        String waiterId = holderJvm.state().waiters().get(0).waiterId();
        String record = redis.<String, String>opsForHash().get(infoKey, waiterId);
        redis.opsForHash().put(infoKey, waiterId,
                record.replaceFirst(" " + server.keyPrefix() + ":inbox:\\S+ ", " nowhere "));

        held.release();
        long released = System.nanoTime();
        String granted = redis.<String, String>opsForHash().get(infoKey, waiterId);
        redis.opsForHash().put(infoKey, waiterId, granted.replace(" nowhere ", " " + inboxOf(record) + " "));
        Permit permit = waiter.get(5, TimeUnit.SECONDS);
        // The waiter tick is 200 ms: served within about one tick, not stranded.
        noise.assertTookLessThan("served after the release whose message was lost", released, System.nanoTime(),
                Duration.ofSeconds(2));
        assertThat(permit.isHeld()).isTrue();
        permit.release();
    }

    @Test
    void aWaiterIsServedWithinATickWhileItsInboxConnectionIsKilledAndTheSubscriptionComesBack()
            throws Exception {
        RedisSemaphore holderJvm = newRegistry().semaphore(name);
        RedisSemaphore waiterJvm = newRegistry(builder -> builder.waiterTick(Duration.ofMillis(500))
                .waiterHeartbeat(Duration.ofSeconds(5))).semaphore(name);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> holderJvm.state().waiters().size() == 1);

        // The grant is published while the inbox connections are down or reconnecting.
        server.assumeOwned("CLIENT KILL");
        assertThat(server.killPubSubClients()).isGreaterThanOrEqualTo(2);
        held.release();
        long released = System.nanoTime();

        Permit permit = waiter.get(5, TimeUnit.SECONDS);
        // Through the inbox if it was back in time, else through the next 500 ms tick: never stranded.
        noise.assertTookLessThan("served after the release with the inbox killed", released, System.nanoTime(),
                Duration.ofMillis(2500));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RedisOutageTest.inboxSubscriptions(server, server.keyPrefix()) >= 2);
        permit.release();
    }

    @Test
    void afterItsConnectionIsKilledTheInboxHandsOffAgain() throws Exception {
        RedisSemaphore holderJvm = newRegistry().semaphore(name);
        RedisSemaphore waiterJvm = newRegistry(builder -> builder.waiterTick(Duration.ofSeconds(5))
                .waiterHeartbeat(Duration.ofSeconds(30))).semaphore(name);

        server.assumeOwned("CLIENT KILL");
        assertThat(server.killPubSubClients()).isGreaterThanOrEqualTo(2);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RedisOutageTest.inboxSubscriptions(server, server.keyPrefix()) >= 2);

        // With the waiter tick at 5 s, a hand-off within 2 s can only come through the inbox.
        Permit held = holderJvm.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> holderJvm.state().waiters().size() == 1);
        held.release();
        waiter.get(2, TimeUnit.SECONDS).release();
    }

    @Test
    void waitingCallersDoNotPollRedis() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name);
        Permit held = semaphore.tryAcquire().orElseThrow();
        List<CompletableFuture<Permit>> waiters = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            waiters.add(semaphore.acquireAsync(1, Duration.ofSeconds(30)));
        }
        await().until(() -> semaphore.state().waiters().size() == 50);

        List<CommandMonitor> monitors = target().monitors();
        List<String> commands;
        try {
            commands = CommandMonitor.commandsDuring(monitors, () -> await().pollDelay(Duration.ofSeconds(3))
                    .atMost(Duration.ofSeconds(4)).until(() -> waiters.stream().noneMatch(CompletableFuture::isDone)));
        } finally {
            for (CommandMonitor monitor : monitors) {
                monitor.close();
            }
        }
        // 3 s at a 200 ms waiter tick: about 15 renew calls for all 50 waiters, not 50 x anything.
        // (The first renew on a server may be an EVAL: its script was not in the cache yet.)
        assertThat(commands).hasSizeLessThanOrEqualTo(3_000 / 200 + 2)
                .allSatisfy(command -> assertThat(command).containsPattern("(?i)\"EVAL(SHA)?\""));

        held.release();
        for (CompletableFuture<Permit> waiter : waiters) {
            waiter.get(10, TimeUnit.SECONDS).release();
        }
    }

    @Test
    void aThousandAsyncWaitersOnFourThreadsAreAllServedWithinTheLimit() throws Exception {
        int permits = 5;
        RedisSemaphore semaphore = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(permits));
        ScheduledExecutorService pool = Executors.newScheduledThreadPool(4);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        try {
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                calls.add(CompletableFuture.supplyAsync(() -> semaphore.acquireAsync(1, Duration.ofSeconds(60)), pool)
                        .thenCompose(future -> future)
                        .thenAcceptAsync(permit -> {
                            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            served.incrementAndGet();
                            inside.decrementAndGet();
                            permit.release();
                        }, pool));
            }
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(served).hasValue(1000);
        assertThat(most.get()).isBetween(1, permits);
        SemaphoreState state = semaphore.state();
        assertThat(state.holders()).isEmpty();
        assertThat(state.used()).isZero();
        assertThat(state.waiters()).isEmpty();
    }

    @Test
    void waitingCallersAcrossTwoJvmsAreAllServedAndNeverExceedThePermits() throws Exception {
        int permits = 3;
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(permits);
        List<RedisSemaphore> jvms = List.of(newRegistry().semaphore(name, settings),
                newRegistry().semaphore(name, settings));
        int threadsPerJvm = 16;
        int cycles = 70;
        Contention.Result result = Contention.run(jvms, threadsPerJvm, cycles, semaphore -> Optional.of(
                semaphore.tryAcquire(Duration.ofSeconds(60)).orElseThrow(
                        () -> new AssertionError("a caller was not served within 60 s"))));

        assertThat(result.granted()).isEqualTo(threadsPerJvm * jvms.size() * cycles);
        assertThat(result.most()).isEqualTo(permits);
        SemaphoreState state = jvms.get(0).state();
        assertThat(state.used()).isZero();
        assertThat(state.waiters()).isEmpty();
        assertEveryKeyExpires();
    }

    @Test
    void closingTheRegistryFailsWaitersAndReleasesPermits() throws Exception {
        SemaphoreRegistry closing = newRegistry();
        RedisSemaphore semaphore = closing.semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(1));
        RedisSemaphore observer = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(1));
        Permit held = semaphore.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> observer.state().waiters().size() == 1);

        closing.close();

        assertThat(waiter).failsWithin(Duration.ofSeconds(5)).withThrowableThat()
                .havingCause().isInstanceOf(SemaphoreUnavailableException.class).withMessageContaining("shutting down");
        assertThat(held.isHeld()).isFalse();
        SemaphoreState state = observer.state();
        assertThat(state.used()).isZero();
        assertThat(state.waiters()).isEmpty();
        assertThat(org.assertj.core.api.Assertions.catchThrowable(semaphore::tryAcquire))
                .isInstanceOf(SemaphoreUnavailableException.class);
    }

    /** @return the inbox channel in an info record ("count lease claim token inbox owner") */
    private static String inboxOf(String record) {
        return record.split(" ")[4];
    }
}
