package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

/**
 * Waiting and hand-off on a 3-master Redis Cluster: the shared contract, and sharded pub/sub
 * (grants are {@code SPUBLISH}ed on a channel in the semaphore's own slot).
 */
@Tag("slow")
@Tag("redis-compat")
@RedisTest
class ClusterWaitingTest extends WaitingContract {

    private final RedisCluster cluster;

    ClusterWaitingTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
        this.cluster = cluster;
    }

    @Test
    void aHandOffStaysOnTheShardOfItsSemaphore() throws Exception {
        // Redis 6 (the embedded-redis binary) has no sharded pub/sub: grants are PUBLISHed there,
        // which the contract tests above cover.
        assumeTrue(!cluster.nodes().get(0).info("server").matches("(?s).*redis_version:[1-6]\\..*"),
                "sharded pub/sub needs Redis 7 or newer");
        RedisSemaphore holderJvm = newRegistry().semaphore(name);
        RedisSemaphore waiterJvm = newRegistry().semaphore(name);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> holderJvm.state().waiters().size() == 1);

        // The waiting JVM listens on the semaphore's shard, and only there.
        RedisServer owner = cluster.nodeFor("{" + name + "}");
        String pattern = target().keyPrefix() + ":{" + name + "}:inbox:*";
        for (RedisServer node : cluster.nodes()) {
            assertThat(shardChannels(node, pattern)).as("shard channels on %s", node).hasSize(node == owner ? 1 : 0);
        }

        Map<RedisServer, Map<String, Long>> before = new HashMap<>();
        cluster.nodes().forEach(node -> before.put(node, node.commandCalls()));
        held.release();
        waiter.get(10, TimeUnit.SECONDS).release();

        // The grant went out with SPUBLISH on the owner: no PUBLISH, which the cluster bus
        // would have broadcast to every node, and nothing published on the other shards.
        for (RedisServer node : cluster.nodes()) {
            Map<String, Long> after = node.commandCalls();
            long spublish = after.getOrDefault("spublish", 0L) - before.get(node).getOrDefault("spublish", 0L);
            long publish = after.getOrDefault("publish", 0L) - before.get(node).getOrDefault("publish", 0L);
            assertThat(publish).as("PUBLISH on %s", node).isZero();
            assertThat(spublish).as("SPUBLISH on %s", node).isEqualTo(node == owner ? 1 : 0);
        }
    }

    private static List<Object> shardChannels(RedisServer node, String pattern) {
        RedisClient client = RedisClient.create(node.uri());
        try (var connection = client.connect()) {
            return connection.sync().dispatch(CommandType.PUBSUB, new ArrayOutput<>(StringCodec.UTF8),
                    new CommandArgs<>(StringCodec.UTF8).add("SHARDCHANNELS").add(pattern));
        } finally {
            client.shutdown();
        }
    }
}
