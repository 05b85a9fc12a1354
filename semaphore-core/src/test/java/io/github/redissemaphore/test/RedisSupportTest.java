package io.github.redissemaphore.test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Tag;
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
@Tag("slow")
@Tag("redis-compat")
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
        String key = server.keyPrefix() + ":written-by";
        new StringRedisTemplate(first).opsForValue().set(key, "first");
        assertThat(new StringRedisTemplate(second).opsForValue().get(key)).isEqualTo("first");
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
        redis.opsForValue().get(server.keyPrefix() + ":warm-up"); // connects (HELLO...) before the counting starts
        Map<String, Long> before = server.commandCalls();
        long totalBefore = server.totalCommandsProcessed();

        redis.opsForValue().set(server.keyPrefix() + ":counted", "1");

        assertThat(server.commandCalls().get("set")).isEqualTo(before.getOrDefault("set", 0L) + 1);
        assertThat(server.totalCommandsProcessed()).isGreaterThan(totalBefore);
        assertThat(server.info("server")).contains("redis_version:");
    }

    @Test
    void pauseDelaysCommands(@Dedicated RedisServer server) {
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
        String p = server.keyPrefix();
        redis.opsForValue().set(p + ":a:1", "x", Duration.ofSeconds(60));
        redis.opsForValue().set(p + ":a:2", "x");
        redis.opsForValue().set(p + ":b:1", "x");

        assertThat(server.keys(p + ":a:*")).containsExactly(p + ":a:1", p + ":a:2");
        assertThat(server.pttl(p + ":a:1")).isBetween(1L, 60_000L);
        assertThat(server.pttl(p + ":a:2")).isEqualTo(-1);
        assertThat(server.pttl(p + ":missing")).isEqualTo(-2);
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
        assertThat(shared.keys("only-here")).isEmpty();
        assertThat(dedicated.keyPrefix()).startsWith("semaphore-test-").isNotEqualTo(shared.keyPrefix());
    }

    @Test
    void aServerTheSupportDidNotStartRefusesEveryFaultAndKeepsItsData(@Dedicated RedisServer real) {
        real.adminCommand("SET", "someones-data", "precious");
        real.adminCommand("CONFIG", "SET", "maxmemory-policy", "noeviction");
        try (RedisServer foreign = RedisServer.foreign(real.host(), real.port(), "REDIS_URL")) {
            assertThat(foreign.owned()).isFalse();
            assertThat(foreign.managed()).isFalse();

            Map<String, ThrowingCallable> faults = new LinkedHashMap<>();
            faults.put("stop", foreign::stop);
            faults.put("start", foreign::start);
            faults.put("kill", foreign::kill);
            faults.put("FLUSHALL", foreign::flushAll);
            faults.put("FLUSHDB", () -> foreign.adminCommand("flushdb", "async"));
            faults.put("CLIENT PAUSE", () -> foreign.pause(Duration.ofSeconds(5)));
            faults.put("DEBUG SLEEP", () -> foreign.debugSleep(Duration.ofSeconds(5)));
            faults.put("CLIENT KILL", foreign::killPubSubClients);
            faults.put("SCRIPT FLUSH", () -> FaultAdmin.scriptFlush(foreign));
            faults.put("CONFIG SET", () -> foreign.adminCommand("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"));
            faults.put("CONFIG RESETSTAT", () -> foreign.adminCommand("CONFIG", "RESETSTAT"));
            faults.put("ACL SETUSER", () -> foreign.adminCommand("ACL", "SETUSER", "intruder", "on"));
            faults.put("ACL LOG RESET", () -> foreign.adminCommand("ACL", "LOG", "RESET"));
            faults.put("SHUTDOWN", () -> foreign.adminCommand("SHUTDOWN", "NOSAVE"));
            faults.forEach((operation, fault) -> assertThatThrownBy(fault).as(operation)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("refusing").hasMessageContaining(operation).hasMessageContaining("@Dedicated"));

            // Reading is fine.
            assertThat(foreign.adminCommand("CONFIG", "GET", "maxmemory-policy")).isEqualTo(
                    List.of("maxmemory-policy", "noeviction"));
            assertThat(foreign.adminCommand("ACL", "LOG")).isEqualTo(List.of());
            assertThat((String) foreign.adminCommand("CLIENT", "LIST")).isNotEmpty();
            assertThat(foreign.info("server")).contains("redis_version:");
        }
        assertThat(real.adminCommand("GET", "someones-data")).isEqualTo("precious");
        assertThat(real.isRunning()).isTrue();
        assertThat(real.adminCommand("ACL", "USERS")).isEqualTo(List.of("default"));
    }

    @Test
    void onlyTheKeysUnderTheHandlesPrefixAreDeleted(@Dedicated RedisServer real) {
        RedisServer foreign = RedisServer.foreign(real.host(), real.port(), "REDIS_URL");
        String own = foreign.keyPrefix();
        StringRedisTemplate redis = new StringRedisTemplate(real.connectionFactory());
        // More keys than one SCAN page, ours among them.
        Map<String, String> others = new LinkedHashMap<>();
        Map<String, String> ours = new LinkedHashMap<>();
        for (int i = 0; i < 2500; i++) {
            others.put("user:" + i, "v");
            if (i % 10 == 0) {
                ours.put(own + ":{s" + i + "}:state", "v");
            }
        }
        others.putAll(Map.of(own + "-not-ours", "v", own, "v", "x" + own + ":y", "v",
                RedisServer.newKeyPrefix() + ":{s}:state", "v", "semaphore:{s}:state", "v"));
        redis.opsForValue().multiSet(others);
        redis.opsForValue().multiSet(ours);

        assertThat(foreign.deleteOwnKeys()).isEqualTo(ours.size());

        assertThat(real.keys("*")).containsExactlyInAnyOrderElementsOf(others.keySet());
        redis.opsForValue().multiSet(ours);
        foreign.close();
        assertThat(real.keys("*")).as("closing a REDIS_URL handle deletes its keys")
                .containsExactlyInAnyOrderElementsOf(others.keySet());
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
    void aWrappedServerRunsThroughItsWrapperAtEveryStart(@TempDir Path directory) throws IOException {
        // A wrapper like valgrind: it does something of its own, then becomes redis-server.
        Path starts = directory.resolve("starts");
        Path wrapper = directory.resolve("wrapper.sh");
        Files.writeString(wrapper, "#!/bin/sh\necho started >> '" + starts + "'\nexec \"$@\"\n");
        assertThat(wrapper.toFile().setExecutable(true)).isTrue();

        try (RedisServer server = RedisServers.startWrapped(List.of(wrapper.toString()))) {
            assertThat(server.adminCommand("PING")).isEqualTo("PONG");
            server.stop();
            server.start();
            assertThat(server.adminCommand("PING")).isEqualTo("PONG");
        }

        assertThat(Files.readAllLines(starts)).containsExactly("started", "started");
        assertThatThrownBy(() -> RedisServers.startWrapped(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wrapper");
    }

    @Test
    void theExtensionClosesWhatItStartedAndCleansBetweenTests(RedisServer sameKindAsTheProbes) {
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
        if (sameKindAsTheProbes.owned()) {
            // A key outside the prefix fails its test on a server of the support (and is gone).
            assertThat(summary.getFailures()).extracting(failure -> failure.getException().getMessage())
                    .satisfiesExactlyInAnyOrder(
                            message -> assertThat(message).contains("deliberate"),
                            message -> assertThat(message).contains("wrote keys outside its prefix", "[stray]"));
            assertThat(sameKindAsTheProbes.keys("stray")).isEmpty();
        } else {
            assertThat(summary.getTestsAbortedCount()).isEqualTo(1);
            assertThat(summary.getFailures()).singleElement()
                    .satisfies(failure -> assertThat(failure.getException()).hasMessageContaining("deliberate"));
        }
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
