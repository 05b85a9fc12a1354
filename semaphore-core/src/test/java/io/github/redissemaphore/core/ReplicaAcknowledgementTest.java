package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisSentinel;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Grants that wait for replicas ({@code replicas > 0}: Redis {@code WAIT}), on a real master and
 * replica watched by a Sentinel: a grant the caller was told of survives a failover to that
 * replica, whether it was made by the caller's own call or handed over by another JVM's release;
 * with the replica down, grants fail within the timeouts and nothing is left held; while a
 * grant waits for replicas, other callers' commands do not wait behind it; and an application's
 * pipelining flush policy does not hold a grant's commands back.
 */
@Tag("redis-compat")
@Tag("slow")
class ReplicaAcknowledgementTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);

    /** The machine's scheduling noise while the test runs, which widens the bounds timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopNoise() {
        noise.close();
    }

    @Test
    void grantsAcknowledgedByTheReplicaSurviveAFailoverToIt() throws Exception {
        // Generous: on a loaded machine a replica can take seconds to acknowledge.
        SemaphoreSettings replicated = SemaphoreSettings.DEFAULTS.withPermits(2).withLeaseTime(Duration.ofSeconds(30))
                .withReplicas(1, Duration.ofSeconds(3));
        try (RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry holderJvm = registry(sentinel);
             SemaphoreRegistry waiterJvm = registry(sentinel)) {
            RedisSemaphore holderSide = holderJvm.semaphore("replicated", replicated);
            RedisSemaphore waiterSide = waiterJvm.semaphore("replicated", replicated);
            Permit direct = holderSide.tryAcquire().orElseThrow();
            Permit toHandOver = holderSide.tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiting = waiterSide.acquireAsync(1, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiterSide.state().waiters().size() == 1);
            toHandOver.release();
            Permit handedOver = waiting.get(10, TimeUnit.SECONDS);

            // The moment the callers are told, the replica has both grants; the hand-off as a full
            // lease (its claim, a waiter heartbeat of 10 s, was confirmed by the waiter's own write).
            int oldMaster = sentinel.master().port();
            sentinel.master().kill();
            await().atMost(Duration.ofSeconds(30)).until(() -> sentinel.currentMasterPort() != oldMaster);

            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> waiterSide.state().used() == 2);
            SemaphoreState state = waiterSide.state();
            assertThat(state.holders()).extracting(SemaphoreState.Holder::permitId)
                    .containsExactlyInAnyOrder(direct.id(), handedOver.id());
            assertThat(state.holders()).filteredOn(holder -> holder.permitId().equals(handedOver.id()))
                    .singleElement()
                    .satisfies(holder -> assertThat(holder.leaseRemaining()).isGreaterThan(Duration.ofSeconds(15)));
            assertThat(waiterSide.tryAcquire()).isEmpty();
            direct.release();
            handedOver.release();
        }
    }

    @Test
    void withTheReplicaDownGrantsFailWithinTheTimeoutsAndNothingIsLeftHeld() throws Exception {
        Duration replicationTimeout = Duration.ofSeconds(1);
        SemaphoreSettings replicated = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofSeconds(30))
                .withReplicas(1, replicationTimeout);
        try (RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry holderJvm = registry(sentinel);
             SemaphoreRegistry waiterJvm = registry(sentinel)) {
            RedisSemaphore holderSide = holderJvm.semaphore("unreplicated", replicated);
            RedisSemaphore waiterSide = waiterJvm.semaphore("unreplicated", replicated);
            // A hand-off set up while the replica is still there...
            Permit held = holderSide.tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiting = waiterSide.acquireAsync(1, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiterSide.state().waiters().size() == 1);

            sentinel.replica().stop();
            // ...and made once it is gone: the waiter's confirmation is not acknowledged.
            held.release();
            assertThatThrownBy(() -> waiting.get(COMMAND_TIMEOUT.plus(replicationTimeout).toSeconds() + 5,
                    TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(SemaphoreUnavailableException.class)
                    .hasMessageContaining("only 0 of the 1 replicas required acknowledged it within 1000 ms");
            // Given back before the caller is told, as its message says: a new call finds it free.
            assertThat(holderSide.state().used()).as("permits used when the waiter was told").isZero();

            long start = System.nanoTime();
            assertThatThrownBy(holderSide::tryAcquire)
                    .isInstanceOf(SemaphoreUnavailableException.class)
                    .hasMessageContaining("given back");
            long end = System.nanoTime();
            Duration late = noise.during(start, end);
            // Within the two timeouts and 200 ms, plus however late the machine let any timer run meanwhile.
            assertThat(Duration.ofNanos(end - start)).as("a 10 ms JDK timer ran up to %d ms late meanwhile",
                            late.toMillis())
                    .isLessThan(COMMAND_TIMEOUT.plus(replicationTimeout).plusMillis(200).plus(late));
            assertThat(holderSide.state().used()).as("permits used when the caller was told").isZero();

            // Both grants were given back: nothing is held, nobody waits.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                SemaphoreState state = holderSide.state();
                assertThat(state.used()).isZero();
                assertThat(state.holders()).isEmpty();
                assertThat(state.waiters()).isEmpty();
            });
        }
    }

    /**
     * While a grant's {@code WAIT} blocks on the master (the replica stopped, so it blocks for the
     * whole replication timeout, 3 s), other callers of the same JVM are served as usual: its WAIT
     * runs on a connection of its own. The other calls start only once the server shows the WAIT
     * in flight, and all of them end before it does.
     */
    @Test
    void aGrantWaitingForReplicasDoesNotHoldUpOtherCallers() throws Exception {
        Duration replicationTimeout = Duration.ofSeconds(3);
        SemaphoreSettings replicated = SemaphoreSettings.DEFAULTS.withReplicas(1, replicationTimeout);
        try (RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry jvm = SemaphoreRegistry.builder(sentinel.connectionFactory(Duration.ofSeconds(30)))
                     .build()) {
            RedisSemaphore other = jvm.semaphore("plain", SemaphoreSettings.DEFAULTS);
            other.tryAcquire().orElseThrow().release();
            sentinel.replica().stop();
            long asked = System.nanoTime();
            CompletableFuture<Permit> stuck = jvm.semaphore("waits-for-replicas", replicated)
                    .acquireAsync(1, Duration.ZERO);
            CompletableFuture<Long> answered = stuck.handle((permit, error) -> System.nanoTime());
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                    .until(() -> waitInFlight(sentinel.master()));
            long seen = System.nanoTime();

            long slowest = 0;
            long slowestStart = 0;
            for (int i = 0; i < 20; i++) {
                long start = System.nanoTime();
                other.tryAcquire().orElseThrow().release();
                if (System.nanoTime() - start > slowest) {
                    slowest = System.nanoTime() - start;
                    slowestStart = start;
                }
            }
            Duration late = noise.during(slowestStart, slowestStart + slowest);
            long othersDone = System.nanoTime();
            boolean stillWaiting = !stuck.isDone();

            assertThatThrownBy(() -> stuck.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(SemaphoreUnavailableException.class);
            long stuckFor = answered.join() - asked;
            System.out.printf("WAIT in flight %d ms after the grant was asked; 20 other calls (acquire + release)"
                            + " meanwhile, the slowest %d ms, all done %d ms after that; the grant's answer came %d ms"
                            + " after it was asked (replication timeout %d ms); a 10 ms JDK timer ran up to %d ms late"
                            + " during the slowest%n", millis(seen - asked), millis(slowest),
                    millis(othersDone - seen), millis(stuckFor), replicationTimeout.toMillis(), late.toMillis());
            assertThat(stillWaiting).as("the grant still waited for its replica when the others were done").isTrue();
            // Well under the replication timeout, plus however late the machine let any timer run meanwhile.
            assertThat(Duration.ofNanos(slowest)).as("the slowest other call")
                    .isLessThan(Duration.ofSeconds(1).plus(late));
            assertThat(Duration.ofNanos(stuckFor)).as("WAIT blocked for the replication timeout")
                    .isGreaterThanOrEqualTo(replicationTimeout);
        }
    }

    /**
     * An application may set a pipelining flush policy that holds commands back
     * ({@code buffered(n)}, {@code flushOnClose()}); the connection a grant waits for replicas on
     * comes from a pipeline, so its script, its marker and its {@code WAIT} must still be sent at
     * once: the caller's own grant and a hand-over confirmed by the waiting JVM both go through.
     */
    @Test
    void grantsWaitingForReplicasAreSentUnderABufferedPipeliningFlushPolicy() throws Exception {
        SemaphoreSettings replicated = SemaphoreSettings.DEFAULTS.withPermits(2).withLeaseTime(Duration.ofSeconds(30))
                .withReplicas(1, Duration.ofSeconds(3));
        try (RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry holderJvm = registry(buffered(sentinel));
             SemaphoreRegistry waiterJvm = registry(buffered(sentinel))) {
            RedisSemaphore holderSide = holderJvm.semaphore("buffered", replicated);
            RedisSemaphore waiterSide = waiterJvm.semaphore("buffered", replicated);
            long start = System.nanoTime();
            Permit direct = holderSide.tryAcquire().orElseThrow();
            Permit toHandOver = holderSide.tryAcquire().orElseThrow();
            long granted = System.nanoTime();
            CompletableFuture<Permit> waiting = waiterSide.acquireAsync(1, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiterSide.state().waiters().size() == 1);
            long released = System.nanoTime();
            toHandOver.release();
            Permit handedOver = waiting.get(10, TimeUnit.SECONDS);
            System.out.printf("buffered(3) flush policy: two replicated grants in %d ms, a replicated hand-over in"
                    + " %d ms%n", millis(granted - start), millis(System.nanoTime() - released));
            assertThat(waiterSide.state().holders()).extracting(SemaphoreState.Holder::permitId)
                    .containsExactlyInAnyOrder(direct.id(), handedOver.id());
            direct.release();
            handedOver.release();
        }
    }

    /** @return {@code sentinel}'s connection factory, with a flush policy that holds commands back */
    private static LettuceConnectionFactory buffered(RedisSentinel sentinel) {
        LettuceConnectionFactory factory = sentinel.connectionFactory(COMMAND_TIMEOUT);
        factory.setPipeliningFlushPolicy(LettuceConnection.PipeliningFlushPolicy.buffered(3));
        return factory;
    }

    /** @return whether a client of {@code master} is blocked in {@code WAIT} now */
    private static boolean waitInFlight(RedisServer master) {
        return ((String) master.adminCommand("CLIENT", "LIST")).lines().anyMatch(line -> line.contains(" cmd=wait "));
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    @Test
    void onAClusterTheWaitGoesToTheMasterOfTheSemaphoresSlot() {
        // The test cluster's masters have no replicas: a grant waiting for one is given back, on
        // the node that holds the semaphore, and nothing stays held.
        SemaphoreSettings replicated = SemaphoreSettings.DEFAULTS.withReplicas(1, Duration.ofMillis(200));
        try (RedisCluster cluster = RedisCluster.start();
             SemaphoreRegistry jvm = SemaphoreRegistry.builder(cluster.connectionFactory(COMMAND_TIMEOUT)).build()) {
            RedisSemaphore semaphore = jvm.semaphore("clustered", replicated);
            assertThatThrownBy(semaphore::tryAcquire).isInstanceOf(SemaphoreUnavailableException.class)
                    .hasMessageContaining("only 0 of the 1 replicas");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(semaphore.state().used()).isZero());
            assertThat(cluster.nodeFor("semaphore:{clustered}:replicated").keys("semaphore:{clustered}:replicated"))
                    .hasSize(1);
        }
    }

    private static SemaphoreRegistry registry(RedisSentinel sentinel) {
        return registry(sentinel.connectionFactory(COMMAND_TIMEOUT));
    }

    private static SemaphoreRegistry registry(LettuceConnectionFactory factory) {
        return SemaphoreRegistry.builder(factory)
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(10)).build();
    }
}
