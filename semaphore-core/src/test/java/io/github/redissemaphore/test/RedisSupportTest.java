package io.github.redissemaphore.test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/** The test support itself, on real Redis servers. */
@RedisTest
class RedisSupportTest {

    @Test
    void theSharedServerAnswersThroughAConnectionFactory(RedisServer server) {
        try (RedisConnection connection = server.connectionFactory().getConnection()) {
            assertThat(connection.ping()).isEqualTo("PONG");
        }
        assertThat(server.uri()).isEqualTo("redis://" + server.host() + ":" + server.port());
    }

    @Test
    void eachConnectionFactoryIsANewWorkingOne(RedisServer server) {
        LettuceConnectionFactory first = server.connectionFactory();
        LettuceConnectionFactory second = server.connectionFactory();

        assertThat(first).isNotSameAs(second);
        assertThat(first.isRunning()).isTrue();
        assertThat(second.isRunning()).isTrue();
        new StringRedisTemplate(first).opsForValue().set("written-by", "first");
        assertThat(new StringRedisTemplate(second).opsForValue().get("written-by")).isEqualTo("first");
    }

    @Test
    void stopMakesCommandsFailAndStartBringsTheServerBackOnTheSamePort(@Dedicated RedisServer server) {
        StringRedisTemplate redis = new StringRedisTemplate(server.connectionFactory(Duration.ofMillis(500)));
        redis.opsForValue().set("key", "value");
        int port = server.port();

        server.stop();

        assertThat(server.isRunning()).isFalse();
        assertThat(FreePorts.isListening(server.host(), port)).isFalse();
        assertThat(catchThrowable(() -> redis.opsForValue().get("key"))).isNotNull();

        server.start();

        assertThat(server.port()).isEqualTo(port);
        assertThat(server.isRunning()).isTrue();
        // The same factory reconnects by itself; the data is gone, as nothing is persisted.
        await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
                .until(() -> redis.opsForValue().setIfAbsent("probe", "1") != null);
        assertThat(redis.opsForValue().get("key")).isNull();
    }

    @Test
    void killEndsTheProcessAndStartRevivesIt(@Dedicated RedisServer server) {
        server.kill();
        assertThat(FreePorts.isListening(server.host(), server.port())).isFalse();

        server.start();
        try (RedisConnection connection = server.connectionFactory().getConnection()) {
            assertThat(connection.ping()).isEqualTo("PONG");
        }
    }

    @Test
    void killPubSubClientsReturnsHowManySubscribersItKilled(@Dedicated RedisServer server) {
        RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        try (StatefulRedisPubSubConnection<String, String> subscriber = client.connectPubSub()) {
            subscriber.sync().subscribe("news");

            assertThat(server.killPubSubClients()).isEqualTo(1);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }

    @Test
    void commandCallsCountsTheCommandsSent(RedisServer server) {
        StringRedisTemplate redis = new StringRedisTemplate(server.connectionFactory());
        redis.opsForValue().get("warm-up"); // connects (HELLO...) before the counting starts
        Map<String, Long> before = server.commandCalls();
        long totalBefore = server.totalCommandsProcessed();

        redis.opsForValue().set("counted", "1");

        assertThat(server.commandCalls().get("set")).isEqualTo(before.getOrDefault("set", 0L) + 1);
        assertThat(server.totalCommandsProcessed()).isGreaterThan(totalBefore);
        assertThat(server.info("server")).contains("redis_version:");
    }

    @Test
    void pauseDelaysCommands(RedisServer server) {
        try (RedisConnection connection = server.connectionFactory().getConnection()) {
            connection.ping(); // connected before the pause, so only the command is delayed

            server.pause(Duration.ofMillis(700));
            long start = System.nanoTime();
            connection.ping();

            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(400));
        }
    }

    @Test
    void debugSleepStallsTheServer(@Dedicated RedisServer server) throws Exception {
        try (RedisConnection connection = server.connectionFactory().getConnection()) {
            connection.ping();

            CompletableFuture<Void> awake = server.debugSleep(Duration.ofMillis(700));
            long start = System.nanoTime();
            connection.ping();

            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(300));
            awake.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void keysAndPttlHelpers(RedisServer server) {
        StringRedisTemplate redis = new StringRedisTemplate(server.connectionFactory());
        redis.opsForValue().set("a:1", "x", Duration.ofSeconds(60));
        redis.opsForValue().set("a:2", "x");
        redis.opsForValue().set("b:1", "x");

        assertThat(server.keys("a:*")).containsExactly("a:1", "a:2");
        assertThat(server.pttl("a:1")).isBetween(1L, 60_000L);
        assertThat(server.pttl("a:2")).isEqualTo(-1);
        assertThat(server.pttl("missing")).isEqualTo(-2);
    }

    @Test
    void theEmbeddedBinaryIsAWorkingFallback() {
        try (RedisServer embedded = RedisServers.start(RedisBinary.Choice.EMBEDDED)) {
            assertThat(embedded.managed()).isTrue();
            assertThat(embedded.toString()).contains("embedded-redis jar");
            try (RedisConnection connection = embedded.connectionFactory().getConnection()) {
                assertThat(connection.ping()).isEqualTo("PONG");
            }
            assertThat(embedded.info("server"))
                    .contains("redis_version:" + RedisBinary.resolve(RedisBinary.Choice.EMBEDDED).version());
        }
    }

    @Test
    void thePathIsSearchedEntryByEntry(@TempDir Path directory) throws IOException {
        Path fake = Files.createFile(directory.resolve("redis-server"));
        assertThat(fake.toFile().setExecutable(true)).isTrue();

        assertThat(RedisBinary.onPath("/no/such/dir" + File.pathSeparator + directory)).contains(fake);
        assertThat(RedisBinary.onPath("/no/such/dir")).isEmpty();
        assertThat(RedisBinary.onPath(null)).isEmpty();
    }

    @Test
    void lookingForDockerIsFastWithoutOne() {
        // Answers in well under a second here (no engine); a real engine must answer quickly too.
        assertTimeoutPreemptively(Duration.ofSeconds(10), DockerRedis::available);
    }

    @Test
    void theClusterHasThreeMastersAndRoutesKeys(RedisCluster cluster) {
        List<RedisServer> nodes = cluster.nodes();
        assertThat(nodes).hasSize(3).allSatisfy(node -> {
            assertThat(node.managed()).isTrue();
            assertThat((String) node.admin("CLUSTER", "INFO")).contains("cluster_state:ok", "cluster_known_nodes:3");
        });
        assertThat(nodes).extracting(RedisServer::port).doesNotHaveDuplicates();

        StringRedisTemplate redis = new StringRedisTemplate(cluster.connectionFactory());
        redis.opsForValue().set("greeting", "hello");
        assertThat(redis.opsForValue().get("greeting")).isEqualTo("hello");
        for (String key : List.of("{x}a", "{x}b", "{x}c")) {
            redis.opsForValue().set(key, "v", Duration.ofSeconds(60));
        }

        List<RedisServer> holders = nodes.stream().filter(node -> !node.keys("{x}*").isEmpty()).toList();
        assertThat(holders).hasSize(1);
        assertThat(holders.get(0).keys("{x}*")).containsExactly("{x}a", "{x}b", "{x}c");
        assertThat(cluster.nodeFor("{x}b")).isSameAs(holders.get(0));
        assertThat(cluster.keys("*")).containsExactly("greeting", "{x}a", "{x}b", "{x}c");
        assertThat(cluster.pttl("{x}a")).isBetween(1L, 60_000L);
        assertThat(cluster.pttl("greeting")).isEqualTo(-1);
        assertThat(cluster.commandCalls().get("set")).isGreaterThanOrEqualTo(4);
    }

    @Test
    void aDedicatedServerIsAManagedOneOfItsOwn(RedisServer shared, @Dedicated RedisServer dedicated) {
        assertThat(dedicated.managed()).isTrue();
        assertThat(dedicated.port()).isNotEqualTo(shared.port());

        new StringRedisTemplate(dedicated.connectionFactory()).opsForValue().set("only-here", "1");
        assertThat(dedicated.keys("*")).containsExactly("only-here");
        assertThat(shared.keys("*")).isEmpty();
    }

    @Test
    void aNonManagedServerRefusesFaultInjection() {
        RedisServer external = RedisServer.external("127.0.0.1", FreePorts.find(), "test", null);

        assertThat(external.managed()).isFalse();
        assertThatThrownBy(external::stop).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("@Dedicated");
    }

    @Test
    void aServerStartedByHandIsGoneOnceClosed() {
        RedisServer server = RedisServers.start();
        LettuceConnectionFactory factory = server.connectionFactory();

        server.close();

        assertThat(FreePorts.isListening(server.host(), server.port())).isFalse();
        assertThat(factory.isRunning()).isFalse();
    }

    @Test
    void theExtensionClosesWhatItStartedAndFlushesBetweenTests() {
        RedisExtensionProbe.ports.clear();
        RedisExtensionProbe.factories.clear();
        RedisExtensionProbe.keysSeenBySecondTest.clear();
        RedisExtensionProbe.enabled = true;
        TestExecutionSummary summary;
        try {
            SummaryGeneratingListener listener = new SummaryGeneratingListener();
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectClass(RedisExtensionProbe.class)).build(), listener);
            summary = listener.getSummary();
        } finally {
            RedisExtensionProbe.enabled = false;
        }

        assertThat(summary.getTestsSucceededCount()).isEqualTo(3);
        assertThat(summary.getTestsFailedCount()).isEqualTo(1);
        assertThat(summary.getFailures().get(0).getException()).hasMessageContaining("deliberate");
        // The processes of the shared server, the dedicated ones (also of the failed test) and the
        // cluster nodes are gone, and so are their temp directories.
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        assertThat(RedisExtensionProbe.ports).hasSizeGreaterThanOrEqualTo(5).allSatisfy(port -> {
            assertThat(FreePorts.isListening("127.0.0.1", port)).as("port %d answers", port).isFalse();
            try (Stream<Path> files = Files.list(tmp)) {
                assertThat(files.map(file -> file.getFileName().toString()))
                        .noneMatch(name -> name.startsWith("redis-" + port + "-"));
            }
        });
        assertThat(RedisExtensionProbe.factories).isNotEmpty()
                .allSatisfy(factory -> assertThat(factory.isRunning()).isFalse());
        assertThat(RedisExtensionProbe.keysSeenBySecondTest).containsExactly(List.of());
    }
}
