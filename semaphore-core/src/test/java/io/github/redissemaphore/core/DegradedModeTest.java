package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.Engines;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;
import io.github.redissemaphore.test.TcpProxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The degraded modes of {@link WhenUnavailable}, on a server of the test's own that goes away:
 * decisions without Redis (at once once known unreachable), the share, waits, the write-back on
 * recovery, and the races of the switch. The fleet of separate JVMs is {@code DegradedFleetTest}'s.
 */
@RedisTest
class DegradedModeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final SemaphoreSettings LOCAL = local(4, 2);

    /** {@code permits} with a local share of {@code localPermits}, 5 s leases, no wait. */
    private static SemaphoreSettings local(int permits, int localPermits) {
        return new SemaphoreSettings(permits, Duration.ofSeconds(5), Duration.ZERO, true, true)
                .withWhenUnavailable(WhenUnavailable.LOCAL, localPermits);
    }

    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopNoise() {
        noise.close();
    }

    private static SemaphoreRegistry registry(RedisServer server, SemaphoreListener listener) {
        return SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT)).redisTimeout(TIMEOUT)
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2)).listener(listener).build();
    }

    /** A registry that reaches Redis through {@code proxy}, which can cut it off. */
    private static SemaphoreRegistry registry(TcpProxy proxy, SemaphoreListener listener) {
        return SemaphoreRegistry.builder(proxy.connectionFactory(TIMEOUT)).redisTimeout(TIMEOUT)
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2)).listener(listener).build();
    }

    /** Counts what the listener hears of the degraded mode. */
    static final class Heard implements SemaphoreListener {

        final List<String> events = new CopyOnWriteArrayList<>();
        final AtomicInteger local = new AtomicInteger();
        final AtomicInteger allowed = new AtomicInteger();

        @Override
        public void admittedWithoutRedis(String semaphore, int permits, WhenUnavailable mode) {
            (mode == WhenUnavailable.ALLOW ? allowed : local).addAndGet(permits);
        }

        @Override
        public void degradedModeChanged(String semaphore, boolean degraded) {
            events.add(semaphore + (degraded ? " degraded" : " recovered"));
        }

        @Override
        public void rejected(String semaphore, int permits, SemaphoreRejectedException.Reason reason) {
            events.add(semaphore + " " + reason.tag());
        }
    }

    @Test
    void localGrantsItsShareAtOnceWhileRedisIsDownAndWritesTheHoldersBackOnRecovery(@Dedicated RedisServer server)
            throws Exception {
        Heard heard = new Heard();
        try (SemaphoreRegistry registry = registry(server, heard)) {
            RedisSemaphore semaphore = registry.semaphore("degraded", LOCAL);
            Permit throughRedis = semaphore.tryAcquire().orElseThrow();
            assertThat(throughRedis.isLocal()).isFalse();

            server.kill();
            // The first call finds Redis unreachable within the timeout, and is decided here: the
            // permit Redis granted before counts against the share of 2.
            Permit first = semaphore.tryAcquire().orElseThrow();
            assertThat(first.isLocal()).isTrue();
            assertThat(first.fencingToken()).isZero();
            assertThat(semaphore.localState().degraded()).isNotNull()
                    .satisfies(d -> assertThat(d.share()).isEqualTo(2))
                    .satisfies(d -> assertThat(d.localPermitsHeld()).isEqualTo(1));

            // Later calls are decided at once, without waiting for Redis.
            long start = System.nanoTime();
            Optional<Permit> refused = semaphore.tryAcquire();
            noise.assertTookLessThan("a local refusal", start, System.nanoTime(), Duration.ofMillis(200));
            assertThat(refused).isEmpty();
            throughRedis.release();
            start = System.nanoTime();
            Permit second = semaphore.tryAcquire().orElseThrow();
            noise.assertTookLessThan("a local grant", start, System.nanoTime(), Duration.ofMillis(200));
            assertThat(second.isLocal()).isTrue();
            assertThat(heard.local).hasValue(2);
            assertThat(heard.events).contains("degraded degraded", "degraded local-share-in-use");

            second.release();
            server.start();
            // Written back within the probe and the settle time: the holder is in Redis, and new
            // calls go through Redis again.
            await().atMost(Duration.ofSeconds(10)).until(() -> heard.events.contains("degraded recovered"));
            await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().holders().size() == 1);
            assertThat(semaphore.localState().degraded()).isNull();
            assertThat(first.isHeld()).isTrue();
            assertThat(first.fencingToken()).isZero();
            Permit after = semaphore.tryAcquire().orElseThrow();
            assertThat(after.isLocal()).isFalse();
            assertThat(semaphore.state().used()).isEqualTo(2);

            first.release();
            after.release();
            assertThat(semaphore.state().used()).isZero();
        }
    }

    @Test
    void aLocalWaiterIsServedInOrderAndRefusedAtItsDeadlineWithTheReason(@Dedicated RedisServer server)
            throws Exception {
        Heard heard = new Heard();
        try (SemaphoreRegistry registry = registry(server, heard)) {
            RedisSemaphore semaphore = registry.semaphore("waits", local(2, 1));
            semaphore.tryAcquire().orElseThrow().release();
            server.kill();
            Permit held = semaphore.tryAcquire().orElseThrow();
            CompletableFuture<Permit> firstWaiter = semaphore.acquireAsync(1, Duration.ofSeconds(30));
            CompletableFuture<Permit> secondWaiter = semaphore.acquireAsync(1, Duration.ofSeconds(30));
            Throwable timedOut = catchThrowable(() -> semaphore.acquire(1, Duration.ofMillis(100)));
            assertThat(timedOut).isInstanceOfSatisfying(SemaphoreRejectedException.class,
                    e -> assertThat(e.reason()).isEqualTo(SemaphoreRejectedException.Reason.LOCAL_SHARE_IN_USE));

            held.release();
            Permit first = firstWaiter.get(5, TimeUnit.SECONDS);
            assertThat(secondWaiter).isNotDone();
            first.release();
            secondWaiter.get(5, TimeUnit.SECONDS).release();
        }
    }

    @Test
    void aWaiterQueuedLocallyJoinsRedisQueueOnRecovery(@Dedicated RedisServer server) throws Exception {
        Heard heard = new Heard();
        try (SemaphoreRegistry registry = registry(server, heard)) {
            RedisSemaphore semaphore = registry.semaphore("moves", local(1, 1));
            semaphore.tryAcquire().orElseThrow().release();
            server.kill();
            Permit held = semaphore.tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiter = semaphore.acquireAsync(1, Duration.ofSeconds(60));
            server.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> semaphore.state().waiters().size() == 1);
            assertThat(semaphore.state().holders()).hasSize(1);
            held.release();
            Permit granted = waiter.get(5, TimeUnit.SECONDS);
            assertThat(granted.isLocal()).isFalse();
            assertThat(granted.fencingToken()).isPositive();
            granted.release();
        }
    }

    @Test
    void allowRunsEveryCallUnguardedAndCountsIt(@Dedicated RedisServer server) throws Exception {
        Heard heard = new Heard();
        try (SemaphoreRegistry registry = registry(server, heard)) {
            RedisSemaphore semaphore = registry.semaphore("allowed",
                    local(1, 0).withWhenUnavailable(WhenUnavailable.ALLOW));
            semaphore.tryAcquire().orElseThrow().release();
            server.kill();
            List<Permit> permits = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                permits.add(semaphore.tryAcquire().orElseThrow());
            }
            assertThat(permits).allSatisfy(p -> assertThat(p.isLocal()).isTrue());
            assertThat(heard.allowed).hasValue(5);
            permits.forEach(Permit::release);
            server.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> heard.events.contains("allowed recovered"));
            // Nothing unguarded is written back.
            assertThat(semaphore.state().holders()).isEmpty();
            assertThat(semaphore.tryAcquire().orElseThrow().isLocal()).isFalse();
        }
    }

    @Test
    void rejectFailsEveryCallAsBefore(@Dedicated RedisServer server) {
        try (SemaphoreRegistry registry = registry(server, new Heard())) {
            RedisSemaphore semaphore = registry.semaphore("rejects", LOCAL.withWhenUnavailable(WhenUnavailable.REJECT, 0));
            server.kill();
            for (int i = 0; i < 2; i++) {
                assertThat(catchThrowable(semaphore::tryAcquire)).isInstanceOf(SemaphoreUnavailableException.class);
            }
            assertThat(semaphore.localState().degraded()).isNull();
        }
    }

    @Test
    void theSharesOfTheInstancesRedisLastShowedAddUpToThePermits(@Dedicated RedisServer server) throws Exception {
        SemaphoreSettings fleet = local(5, 0);
        List<SemaphoreRegistry> instances = new ArrayList<>();
        try {
            List<RedisSemaphore> semaphores = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                SemaphoreRegistry registry = registry(server, new Heard());
                instances.add(registry);
                RedisSemaphore semaphore = registry.semaphore("shared", fleet);
                semaphore.tryAcquire().orElseThrow().release();
                semaphores.add(semaphore);
            }
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> server.adminCommand("ZCARD", "semaphore:{shared}:instances"),
                            n -> Long.valueOf(3).equals(n));
            // Every instance has seen the other two at its next record.
            Thread.sleep(1500);
            server.kill();
            int granted = 0;
            for (RedisSemaphore semaphore : semaphores) {
                while (true) {
                    Optional<Permit> permit = semaphore.tryAcquire();
                    if (permit.isEmpty()) {
                        break;
                    }
                    granted++;
                }
            }
            assertThat(granted).isEqualTo(5);
            assertThat(semaphores).extracting(s -> s.localState().degraded().share())
                    .containsExactlyInAnyOrder(2, 2, 1);
            // P2: once no instance records itself, the key of the instances goes by itself.
            server.start();
            await().atMost(Duration.ofSeconds(15)).until(
                    () -> server.adminCommand("ZCARD", "semaphore:{shared}:instances"), n -> Long.valueOf(3).equals(n));
            instances.forEach(SemaphoreRegistry::close);
            await().atMost(Duration.ofSeconds(15)).until(
                    () -> server.adminCommand("EXISTS", "semaphore:{shared}:instances"), n -> Long.valueOf(0).equals(n));
        } finally {
            instances.forEach(SemaphoreRegistry::close);
        }
    }

    @Test
    void aWriteBackThatFailsLeavesThePermitLocalUntilTheNextRecovery(@Dedicated RedisServer server) throws Exception {
        Heard heard = new Heard();
        try (TcpProxy proxy = TcpProxy.to(server);
             SemaphoreRegistry registry = registry(proxy, heard)) {
            RedisSemaphore semaphore = registry.semaphore("second-outage", LOCAL);
            semaphore.tryAcquire().orElseThrow().release();
            proxy.partition();
            Permit local = semaphore.tryAcquire().orElseThrow();
            assertThat(local.isLocal()).isTrue();
            // Redis answers the probe, and is cut off again just before the write-back is sent:
            // the write-back fails, the permit stays local, and a second outage starts.
            AtomicInteger recoveries = new AtomicInteger();
            Engines.beforeRecovery(registry, () -> {
                if (recoveries.incrementAndGet() == 1) {
                    proxy.partition();
                }
            });
            proxy.heal();
            await().atMost(Duration.ofSeconds(10)).until(() -> recoveries.get() == 1);
            // The write-back times out: the permit is local again, and local decisions go on.
            await().atMost(Duration.ofSeconds(10)).until(() -> semaphore.tryAcquire().map(p -> {
                p.release();
                return p.isLocal();
            }).orElse(false));
            assertThat(local.isHeld()).isTrue();
            assertThat(semaphore.localState().degraded()).isNotNull()
                    .satisfies(d -> assertThat(d.localPermitsHeld()).isEqualTo(1));
            assertThat(heard.events).doesNotContain("second-outage recovered");
            proxy.heal();
            await().atMost(Duration.ofSeconds(15)).until(() -> recoveries.get() == 2
                    && semaphore.localState().degraded() == null);
            await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().holders().size() == 1);
            assertThat(heard.events).containsSubsequence("second-outage degraded", "second-outage recovered");
            assertThat(local.isHeld()).isTrue();
            local.release();
            await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().used() == 0);
        }
    }

    @Test
    void aGrantInFlightWhenRedisBecomesUnreachableIsGivenBackAndTheWaiterIsDecidedLocally(
            @Dedicated RedisServer server) throws Exception {
        Heard heard = new Heard();
        SemaphoreSettings settings = local(1, 1).withWaitTime(Duration.ofSeconds(30));
        try (TcpProxy proxy = TcpProxy.to(server);
             SemaphoreRegistry waiterJvm = registry(proxy, heard);
             SemaphoreRegistry holderJvm = registry(server, new Heard())) {
            RedisSemaphore holderSide = holderJvm.semaphore("in-flight", settings);
            RedisSemaphore waiterSide = waiterJvm.semaphore("in-flight", settings);
            Permit holder = holderSide.tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiter = waiterSide.acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> holderSide.state().waiters().size() == 1);
            // The waiter's JVM is cut off, then Redis grants it: the grant message and the reply to
            // its heartbeat are held in the partition, and its wait is decided locally instead.
            proxy.partition();
            holder.release();
            Permit local = waiter.get(10, TimeUnit.SECONDS);
            assertThat(local.isLocal()).isTrue();
            proxy.heal();
            // The claim Redis made for it is given back, and the local permit is written back: one
            // holder in all, and nobody waits.
            await().atMost(Duration.ofSeconds(15)).until(() -> heard.events.contains("in-flight recovered"));
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                SemaphoreState state = holderSide.state();
                return state.holders().size() == 1 && state.used() == 1 && state.waiters().isEmpty();
            });
            local.release();
            await().atMost(Duration.ofSeconds(5)).until(() -> holderSide.state().used() == 0);
        }
    }

    @Test
    void aPermitRedisGrantedAndReleasedDuringTheOutageFreesTheShareAndLeavesRedisOnRecovery(
            @Dedicated RedisServer server) throws Exception {
        Heard heard = new Heard();
        try (TcpProxy proxy = TcpProxy.to(server);
             SemaphoreRegistry registry = registry(proxy, heard);
             SemaphoreRegistry observer = registry(server, new Heard())) {
            RedisSemaphore semaphore = registry.semaphore("released-meanwhile", local(2, 1));
            Permit throughRedis = semaphore.tryAcquire().orElseThrow();
            proxy.partition();
            // It counts against the share of 1 while held.
            assertThat(semaphore.tryAcquire()).isEmpty();
            long start = System.nanoTime();
            throughRedis.release();
            noise.assertTookLessThan("a release while Redis is known unreachable", start, System.nanoTime(),
                    Duration.ofMillis(200));
            Permit local = semaphore.tryAcquire().orElseThrow();
            assertThat(local.isLocal()).isTrue();
            proxy.heal();
            await().atMost(Duration.ofSeconds(15)).until(() -> heard.events.contains("released-meanwhile recovered"));
            RedisSemaphore outside = observer.semaphore("released-meanwhile", local(2, 1));
            await().atMost(Duration.ofSeconds(10)).until(() -> outside.state().holders().size() == 1
                    && outside.state().used() == 1);
            local.release();
            await().atMost(Duration.ofSeconds(5)).until(() -> outside.state().used() == 0);
        }
    }

    @Test
    void recoveryWhileLocalHoldersReleaseLeavesExactlyTheHoldersStillHeld(@Dedicated RedisServer server)
            throws Exception {
        long seed = Long.getLong("degraded.seed", System.nanoTime());
        java.util.Random random = new java.util.Random(seed);
        Heard heard = new Heard();
        try (TcpProxy proxy = TcpProxy.to(server);
             SemaphoreRegistry registry = registry(proxy, heard);
             SemaphoreRegistry observer = registry(server, new Heard())) {
            SemaphoreSettings settings = local(6, 6);
            RedisSemaphore semaphore = registry.semaphore("releasing", settings);
            RedisSemaphore outside = observer.semaphore("releasing", settings);
            semaphore.tryAcquire().orElseThrow().release();
            for (int round = 0; round < 3; round++) {
                String where = "seed " + seed + " round " + round;
                proxy.partition();
                List<Permit> permits = new ArrayList<>();
                while (permits.size() < 3) {
                    semaphore.tryAcquire(2, Duration.ZERO).ifPresent(permits::add);
                }
                assertThat(permits).as(where).allSatisfy(p -> assertThat(p.isLocal()).isTrue());
                // Released, whole or in part, at random moments around the write-back.
                List<Integer> kept = new CopyOnWriteArrayList<>();
                CountDownLatch released = new CountDownLatch(1);
                Engines.beforeRecovery(registry, () -> new Thread(() -> {
                    for (Permit permit : permits) {
                        try {
                            Thread.sleep(random.nextInt(3));
                        } catch (InterruptedException e) {
                            return;
                        }
                        switch (random.nextInt(3)) {
                            case 0 -> permit.release();
                            case 1 -> {
                                permit.release(1);
                                kept.add(1);
                            }
                            default -> kept.add(2);
                        }
                    }
                    released.countDown();
                }).start());
                int recoveredBefore = (int) heard.events.stream().filter("releasing recovered"::equals).count();
                proxy.heal();
                assertThat(released.await(15, TimeUnit.SECONDS)).as(where).isTrue();
                await().atMost(Duration.ofSeconds(15)).until(() -> heard.events.stream()
                        .filter("releasing recovered"::equals).count() > recoveredBefore);
                int keptCount = kept.stream().mapToInt(Integer::intValue).sum();
                await(where).atMost(Duration.ofSeconds(10)).until(() -> outside.state().used() == keptCount);
                assertThat(outside.state().holders()).as(where).hasSize(kept.size());
                permits.forEach(Permit::release);
                await(where).atMost(Duration.ofSeconds(5)).until(() -> outside.state().used() == 0);
                assertThat(semaphore.localState().permitsHeld()).as(where).isZero();
            }
        }
    }

    @Test
    void aCappedSemaphoreGrantsLocallyWithinTheKeysShareAndTheCapsShare(@Dedicated RedisServer server)
            throws Exception {
        // 2 per key, 3 in all; a local share of 2 per key, so of 3 x 2 / 2 = 3 of the cap.
        SemaphoreSettings capped = local(2, 2).withTotalPermits(3);
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT))
                .redisTimeout(TIMEOUT).configure("exports", capped).build()) {
            RedisSemaphore acme = registry.semaphore("exports", "acme", capped);
            RedisSemaphore globex = registry.semaphore("exports", "globex", capped);
            acme.tryAcquire().orElseThrow().release();
            server.kill();
            List<Permit> permits = new ArrayList<>();
            permits.add(acme.tryAcquire().orElseThrow());
            permits.add(acme.tryAcquire().orElseThrow());
            assertThat(acme.tryAcquire()).as("the key's share").isEmpty();
            permits.add(globex.tryAcquire().orElseThrow());
            assertThat(globex.tryAcquire()).as("the cap's share").isEmpty();
            assertThat(permits).allSatisfy(p -> assertThat(p.isLocal()).isTrue());
            permits.remove(0).release();
            assertThat(globex.tryAcquire()).as("room under the cap again").isPresent();
            server.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> acme.localState().degraded() == null
                    && globex.localState().degraded() == null);
            await().atMost(Duration.ofSeconds(5)).ignoreExceptions()
                    .until(() -> registry.cap("exports").state().used() == 3);
        }
    }
}
