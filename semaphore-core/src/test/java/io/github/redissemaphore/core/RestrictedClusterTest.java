package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis Cluster whose user may not run {@code INFO}, with which the registry reads the nodes'
 * version: it tries {@code SPUBLISH} instead and hands grants over by sharded pub/sub; a user that
 * may not run sharded pub/sub either gets grants by {@code PUBLISH}. Either way a waiter is handed
 * its permit by the message alone (its tick is 10 s away), and so it is for a user without any
 * {@code CLIENT} subcommand (as Dragonfly refuses several). Without {@code CLUSTER NODES}, which the
 * client needs to learn the cluster's slots, nothing can work: a call says so.
 */
@Tag("redis-compat")
@Tag("slow")
@RedisTest
class RestrictedClusterTest {

    private static final String PASSWORD = "cluster-pw-2Vn6";
    private static final Pattern VERSION = Pattern.compile("redis_version:(\\d+)\\.");

    private final List<SemaphoreRegistry> registries = new ArrayList<>();
    /** The machine's scheduling noise while the test runs, which widens the bound timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void closeRegistries() {
        registries.forEach(SemaphoreRegistry::close);
        noise.close();
    }

    @Test
    void withoutInfoSpublishIsTriedAndGrantsGoBySharedPubSub(RedisCluster cluster) throws Exception {
        assumeSharded(cluster);
        RedisConnectionFactory noInfo = user(cluster, "no-info", "-info");
        long spublished = cluster.commandCalls().getOrDefault("spublish", 0L);

        assertHandOffByMessage(cluster, noInfo);

        assertThat(cluster.commandCalls().getOrDefault("spublish", 0L)).isGreaterThan(spublished);
    }

    @Test
    void withoutInfoAndShardedPubSubGrantsGoByPublish(RedisCluster cluster) throws Exception {
        // Redis 6 has no sharded pub/sub to refuse: SPUBLISH is an unknown command there
        RedisConnectionFactory plain = majorVersion(cluster) >= 7
                ? user(cluster, "no-sharded", "-info", "-spublish", "-ssubscribe", "-sunsubscribe")
                : user(cluster, "no-sharded", "-info");
        long published = cluster.commandCalls().getOrDefault("publish", 0L);

        assertHandOffByMessage(cluster, plain);

        assertThat(cluster.commandCalls().getOrDefault("publish", 0L)).isGreaterThan(published);
    }

    @Test
    void withoutClientCommandsGrantsStillGoByMessage(RedisCluster cluster) throws Exception {
        assertHandOffByMessage(cluster, user(cluster, "no-client", "-client"));
    }

    @Test
    void aUserWithoutClusterNodesIsToldWhatTheClientNeeds(RedisCluster cluster) {
        RedisConnectionFactory noTopology = user(cluster, "no-topology", "-cluster");
        RedisSemaphore semaphore = registry(cluster, noTopology).semaphore("reports");

        // a call that times out before the first connect failed (a loaded machine) cannot say why: the next one does
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThatThrownBy(semaphore::tryAcquire)
                .isInstanceOf(SemaphoreUnavailableException.class)
                .hasMessageContaining("the server refused the command CLUSTER")
                .hasMessageContaining("which the client needs to connect (Redis: \"NOPERM")
                .hasMessageContaining("give the Redis user the ACL rule of docs/operating.md"));
    }

    private void assertHandOffByMessage(RedisCluster cluster, RedisConnectionFactory factory) throws Exception {
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS.withPermits(1);
        RedisSemaphore holder = registry(cluster, factory).semaphore("handoff", one);
        RedisSemaphore waiter = registry(cluster, factory).semaphore("handoff", one);
        Permit held = holder.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiting = waiter.acquireAsync(1, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(10)).until(() -> holder.state().waiters().size() == 1);
        await().atMost(Duration.ofSeconds(5)).until(() -> waiter.localState().inboxSubscribed());

        long released = System.nanoTime();
        held.release();
        Permit handedOver = waiting.get(10, TimeUnit.SECONDS);
        noise.assertTookLessThan("the hand-off by message", released, System.nanoTime(), Duration.ofSeconds(5));
        handedOver.release();
    }

    private SemaphoreRegistry registry(RedisCluster cluster, RedisConnectionFactory factory) {
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory).keyPrefix(cluster.keyPrefix())
                .waiterTick(Duration.ofSeconds(10)).waiterHeartbeat(Duration.ofSeconds(30)).build();
        registries.add(registry);
        return registry;
    }

    /** @return a factory of a user made on every node: all on the test's keys and channels but {@code refused} */
    private static RedisConnectionFactory user(RedisCluster cluster, String user, String... refused) {
        List<String> rule = new ArrayList<>(List.of("ACL", "SETUSER", user, "reset", "on", ">" + PASSWORD,
                "~" + cluster.keyPrefix() + ":*", "resetchannels", "&" + cluster.keyPrefix() + ":*", "+@all"));
        rule.addAll(List.of(refused));
        for (RedisServer node : cluster.nodes()) {
            node.adminCommand(rule.toArray(String[]::new));
        }
        return cluster.connectionFactory(user, PASSWORD);
    }

    private static void assumeSharded(RedisCluster cluster) {
        assumeThat(majorVersion(cluster)).as("sharded pub/sub (SPUBLISH, SSUBSCRIBE) needs Redis 7; this redis-server"
                + " is older").isGreaterThanOrEqualTo(7);
    }

    private static int majorVersion(RedisCluster cluster) {
        Matcher version = VERSION.matcher(cluster.nodes().get(0).info("server"));
        assertThat(version.find()).as("redis_version in INFO").isTrue();
        return Integer.parseInt(version.group(1));
    }
}
