package io.github.redissemaphore.core;

import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The claims of docs/guarantees.md that concern a Redis which loses its data (a restart without
 * persistence, or a failover to a replica that missed the last writes): the limit can break,
 * holders learn it, and fencing tokens still only go up.
 */
@Tag("slow")
@Tag("redis-compat")
@RedisTest
class GuaranteesTest {

    @Test
    void aRedisThatLostItsDataMakesHoldersLoseTheirPermitsAndTokensStillIncrease(@Dedicated RedisServer server)
            throws Exception {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory()).build()) {
            RedisSemaphore semaphore = registry.semaphore("guarantees",
                    SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofSeconds(3)));
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

    @Test
    void aFailoverToAReplicaThatMissedAGrantBreaksTheLimitButTheHolderLearnsAndTokensIncrease(
            @Dedicated RedisServer master, @Dedicated RedisServer replica) throws Exception {
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofSeconds(3));
        command(replica, "REPLICAOF", master.host(), String.valueOf(master.port()));
        await().atMost(Duration.ofSeconds(15)).until(() -> replica.info("replication").contains("master_link_status:up"));
        try (SemaphoreRegistry oldSide = SemaphoreRegistry.builder(master.connectionFactory(Duration.ofMillis(500))).build();
             SemaphoreRegistry newSide = SemaphoreRegistry.builder(replica.connectionFactory()).build()) {
            // The replica is cut off before the grant reaches it, as when the master dies right after.
            command(replica, "REPLICAOF", "NO", "ONE");
            Permit first = oldSide.semaphore("failover", one).tryAcquire().orElseThrow();
            CompletableFuture<Permit> lost = new CompletableFuture<>();
            first.onLost(lost::complete);

            // Clients now talk to the promoted replica, which never saw that lease: the limit of 1 breaks.
            Permit second = newSide.semaphore("failover", one).tryAcquire().orElseThrow();
            assertThat(first.isHeld()).isTrue();
            assertThat(second.isHeld()).isTrue();
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());

            // The old master is demoted: renewals there fail, and the old holder learns its lease is gone.
            command(master, "REPLICAOF", replica.host(), String.valueOf(replica.port()));
            assertThat(lost.get(10, TimeUnit.SECONDS)).isSameAs(first);
            assertThat(first.isHeld()).isFalse();
            assertThat(second.isHeld()).isTrue();
            second.release();
        }
    }

    @Test
    void aGrantAcknowledgedByTheReplicaSurvivesAFailoverToIt(@Dedicated RedisServer master,
                                                            @Dedicated RedisServer replica) {
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS.withReplicas(1, Duration.ofSeconds(2));
        command(replica, "REPLICAOF", master.host(), String.valueOf(master.port()));
        await().atMost(Duration.ofSeconds(15)).until(() -> replica.info("replication").contains("master_link_status:up"));
        try (SemaphoreRegistry oldSide = SemaphoreRegistry.builder(master.connectionFactory()).build();
             SemaphoreRegistry newSide = SemaphoreRegistry.builder(replica.connectionFactory()).build()) {
            // replicas = 1: tryAcquire returns only once the replica acknowledged the grant (WAIT).
            Permit first = oldSide.semaphore("waited", one).tryAcquire().orElseThrow();

            command(replica, "REPLICAOF", "NO", "ONE");

            // The promoted replica knows the lease: the limit of 1 holds across the failover.
            RedisSemaphore promoted = newSide.semaphore("waited", one.withReplicas(0, Duration.ofMillis(100)));
            assertThat(promoted.tryAcquire()).isEmpty();
            assertThat(promoted.state().holders()).singleElement()
                    .satisfies(holder -> assertThat(holder.fencingToken()).isEqualTo(first.fencingToken()));
        }
    }

    private static void command(RedisServer server, String... command) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(server.uri());
        try (var connection = client.connect()) {
            connection.sync().dispatch(io.lettuce.core.protocol.CommandType.valueOf(command[0]),
                    new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                    new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8)
                            .addValues(java.util.Arrays.copyOfRange(command, 1, command.length)));
        } finally {
            client.shutdown();
        }
    }
}
