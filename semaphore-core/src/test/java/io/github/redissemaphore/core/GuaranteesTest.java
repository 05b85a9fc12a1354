package io.github.redissemaphore.core;

import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The claims of the README's "Guarantees and limits" section that concern a Redis which loses
 * its data (a restart without persistence, or a failover to a replica that missed the last
 * writes): holders learn it, and fencing tokens still only go up.
 */
@RedisTest
class GuaranteesTest {

    @Test
    void aRedisThatLostItsDataMakesHoldersLoseTheirPermitsAndTokensStillIncrease(@Dedicated RedisServer server)
            throws Exception {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory()).build()) {
            RedisSemaphore semaphore = registry.semaphore("guarantees",
                    SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(600)));
            Permit before = semaphore.tryAcquire().orElseThrow();
            CompletableFuture<Permit> lost = new CompletableFuture<>();
            before.onLost(lost::complete);

            // Restart without persistence: every key is gone, as after a failover to an empty replica.
            server.stop();
            server.start();

            assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(before);
            assertThat(before.isHeld()).isFalse();
            Permit after = await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> semaphore.tryAcquire().orElse(null), permit -> permit != null);
            // The state key with the counter is gone too; the token comes from the server clock.
            assertThat(after.fencingToken()).isGreaterThan(before.fencingToken());
            after.release();
        }
    }
}
