package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisSentinel;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Sentinel-managed failover, as production runs it: the master is killed, the Sentinel promotes
 * the replica, and the library follows on its own. A lease that had reached the replica survives,
 * so the limit holds; waiting and renewal go on against the new master.
 */
@Tag("redis-compat")
@Tag("slow")
class SentinelFailoverTest {

    @Test
    void theRegistryFollowsASentinelFailoverAndAReplicatedLeaseSurvivesIt() throws Exception {
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofSeconds(10));
        try (RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(sentinel.connectionFactory(Duration.ofSeconds(1)))
                     .build();
             SemaphoreRegistry waiterJvm = SemaphoreRegistry.builder(sentinel.connectionFactory(Duration.ofSeconds(1)))
                     .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(10)).build()) {
            RedisSemaphore holderSide = holderJvm.semaphore("sentinel", one);
            RedisSemaphore waiterSide = waiterJvm.semaphore("sentinel", one);
            Permit held = holderSide.tryAcquire().orElseThrow();
            CompletableFuture<Permit> lost = new CompletableFuture<>();
            held.onLost(lost::complete);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> !sentinel.replica().keys("semaphore:{sentinel}:deadlines").isEmpty());
            int oldMaster = sentinel.master().port();

            sentinel.master().kill();
            await().atMost(Duration.ofSeconds(30)).until(() -> sentinel.currentMasterPort() != oldMaster);

            // Both JVMs reach the new master by themselves; it knows the lease, so nobody else gets the permit.
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> waiterSide.state().used() == 1);
            assertThat(waiterSide.tryAcquire()).isEmpty();
            CompletableFuture<Permit> waiter = waiterSide.acquireAsync(1, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiterSide.state().waiters().size() == 1);

            // The holder's renewals carry on against the new master: its lease was never lost.
            assertThat(held.isHeld()).isTrue();
            held.release();
            Permit next = waiter.get(10, TimeUnit.SECONDS);
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(lost).isNotDone();
            next.release();
        }
    }
}
