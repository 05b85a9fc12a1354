package io.github.redissemaphore.core;

import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/** Redis going away and coming back, on a server process of the test's own. */
@Tag("redis-compat")
@RedisTest
class RedisOutageTest {

    /** The machine's scheduling noise while the test runs, which widens the bound timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopNoise() {
        noise.close();
    }

    private static final String NAME = "outage";

    @Test
    void failsFastWhileRedisIsDownAndRecoversWithoutARestart(@Dedicated RedisServer server) throws Exception {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(Duration.ofSeconds(2)))
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2)).build()) {
            RedisSemaphore semaphore = registry.semaphore(NAME);
            semaphore.tryAcquire().orElseThrow().release();

            server.stop();
            long start = System.nanoTime();
            Throwable failure = catchThrowable(semaphore::tryAcquire);
            long failed = System.nanoTime();

            assertThat(failure).isInstanceOf(SemaphoreUnavailableException.class)
                    .hasMessageContaining("Redis unavailable for semaphore 'outage'").hasCauseInstanceOf(RuntimeException.class);
            // Within the 2 s command timeout (plus slack, and however late the machine let any timer
            // run meanwhile), never a hang.
            noise.assertTookLessThan("tryAcquire() while Redis is down", start, failed, Duration.ofSeconds(4));
            assertThat(semaphore.acquireAsync(1, Duration.ofSeconds(1)))
                    .failsWithin(Duration.ofSeconds(6)).withThrowableThat()
                    .havingCause().isInstanceOf(SemaphoreUnavailableException.class);

            server.start();
            Permit permit = await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
                    .until(() -> semaphore.tryAcquire().orElse(null), p -> p != null);
            assertThat(permit.isHeld()).isTrue();

            // The inbox is back too: a waiter is handed the permit on release.
            CompletableFuture<Permit> waiter = semaphore.acquireAsync(1, Duration.ofSeconds(10));
            await().until(() -> semaphore.state().waiters().size() == 1);
            permit.release();
            waiter.get(5, TimeUnit.SECONDS).release();
        }
    }

    @Test
    void aPermitWhoseLeaseRunsOutWhileRedisIsDownIsReportedLost(@Dedicated RedisServer server) throws Exception {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(Duration.ofMillis(500)))
                .build()) {
            Permit permit = registry.semaphore(NAME, SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(900)))
                    .tryAcquire().orElseThrow();
            CompletableFuture<Permit> lost = new CompletableFuture<>();
            permit.onLost(lost::complete);

            server.stop();

            assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(permit);
            assertThat(permit.isHeld()).isFalse();
            server.start();
        }
    }

    @Test
    void aRegistryBuiltWhileRedisIsDownStartsAndCatchesUpWhenRedisComes(@Dedicated RedisServer server)
            throws Exception {
        server.stop();
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(Duration.ofSeconds(1)))
                .waiterTick(Duration.ofSeconds(5)).waiterHeartbeat(Duration.ofSeconds(30)).build()) {
            RedisSemaphore semaphore = registry.semaphore(NAME);
            assertThat(catchThrowable(semaphore::tryAcquire)).isInstanceOf(SemaphoreUnavailableException.class);

            server.start();
            Permit permit = await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
                    .until(() -> semaphore.tryAcquire().orElse(null), p -> p != null);

            // The inbox subscribes once Redis is there; with a 5 s tick, a hand-off within 2 s comes through it.
            await().atMost(Duration.ofSeconds(10)).until(() -> inboxSubscriptions(server, "semaphore") == 1);
            CompletableFuture<Permit> waiter = semaphore.acquireAsync(1, Duration.ofSeconds(10));
            await().until(() -> semaphore.state().waiters().size() == 1);
            permit.release();
            waiter.get(2, TimeUnit.SECONDS).release();
        }
    }

    /** @return how many inbox channels of registries with {@code keyPrefix} are subscribed to */
    static long inboxSubscriptions(RedisServer server, String keyPrefix) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(server.uri());
        try (var connection = client.connect()) {
            return connection.sync().pubsubChannels(keyPrefix + ":inbox:*").size();
        } finally {
            client.shutdown();
        }
    }
}
