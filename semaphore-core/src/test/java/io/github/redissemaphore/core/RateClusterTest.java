package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The rate on a 3-master Redis Cluster: the window is a key of the semaphore's own slot (one
 * script call takes a permit and a slot together, which Redis Cluster allows only within one
 * slot), refusals and waits work there as on one server, and the window leaves nothing when idle.
 */
@Tag("slow")
@Tag("redis-compat")
@RedisTest
class RateClusterTest {

    private static final Duration PERIOD = Duration.ofSeconds(3);

    private final RedisCluster cluster;
    private final SemaphoreRegistry registry;

    RateClusterTest(RedisCluster cluster) {
        this.cluster = cluster;
        this.registry = SemaphoreRegistry.builder(cluster.connectionFactory()).keyPrefix(cluster.keyPrefix()).build();
    }

    @AfterEach
    void close() {
        registry.close();
    }

    @Test
    void theWindowLivesInTheSemaphoresSlotAndRefusesWaitsAndLeavesNothing() throws Exception {
        String name = "rated-" + System.nanoTime();
        RedisSemaphore payments = registry.semaphore(name,
                new SemaphoreSettings(3, Duration.ofSeconds(30), Duration.ZERO, true, true).withRateLimit(2, PERIOD));
        Permit first = payments.tryAcquire().orElseThrow();
        first.release();
        Permit second = payments.tryAcquire().orElseThrow();
        assertThatThrownBy(payments::acquire).isInstanceOfSatisfying(SemaphoreRejectedException.class,
                refused -> assertThat(refused.reason()).isEqualTo(SemaphoreRejectedException.Reason.RATE_LIMITED));
        CompletableFuture<Permit> waiting = payments.acquireAsync(1, Duration.ofSeconds(10));
        Permit third = waiting.get(10, TimeUnit.SECONDS);
        assertThat(third.fencingToken() / 1000 - first.fencingToken() / 1000)
                .as("granted once the first grant's slot aged out").isGreaterThanOrEqualTo(PERIOD.toMillis());
        SemaphoreKeys keys = SemaphoreKeys.of(cluster.keyPrefix(), name).withRate(2, PERIOD);
        String window = keys.all().get(3);
        assertThat(cluster.nodeFor(window)).as("the window's node").isEqualTo(cluster.nodeFor(keys.all().get(0)));
        assertThat(cluster.keys(cluster.keyPrefix() + ":{" + name + "}:rate")).containsExactly(window);
        second.release();
        third.release();
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> cluster.keys(cluster.keyPrefix() + ":{" + name + "}:rate").isEmpty());
    }
}
