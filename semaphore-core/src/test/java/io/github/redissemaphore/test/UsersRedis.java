package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.ClassSelector;
import org.junit.platform.engine.discovery.MethodSelector;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.springframework.data.redis.connection.RedisConnection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A server standing for the one a user points the suite at (REDIS_URL), for the tests that prove
 * what a run of the suite does to it: a server of the test's own holding "the user's" data (keys
 * with and without a TTL, keys under the library's default prefix and under another run's test
 * prefix, more keys than one SCAN page), a script of the user's, a changed setting and a connected
 * subscriber. {@link #runAsRedisUrl(List)} runs tests through a JUnit launcher with this server as
 * their REDIS_URL (system property {@code redis.test.url}, read first whatever
 * {@code REDIS_TEST_BINARY} says); {@link #assertLeftIntact()} then checks that every key of the
 * user is there with the same value (DUMP) and TTL, and nothing else is, that the script, the
 * configuration and the ACL users are unchanged, that the server was never restarted and that the
 * subscriber is still connected.
 *
 * <pre>{@code
 * try (UsersRedis users = UsersRedis.start()) {
 *     UsersRedis.Run run = users.runAsRedisUrl(List.of(selectClass(SomeTest.class)));
 *     run.assertPassed();
 *     assertThat(run.aborted()).isEmpty();
 *     users.assertLeftIntact();
 * }
 * }</pre>
 */
public final class UsersRedis implements AutoCloseable {

    /** Seconds: long enough to outlive the run many times over. */
    private static final String TTL = "3600";
    private static final int BULK_KEYS = 3000;

    private final RedisServer server;
    private final RespConnection subscriber;
    private final long subscriberId;
    /** The user's keys, each with whether it has a TTL. */
    private final Map<String, Boolean> keys;
    private final Map<String, byte[]> dumps;
    private final String script;
    private final Object config;
    private final Object aclRules;
    private final String runId;

    private UsersRedis(RedisServer server, RespConnection subscriber) {
        this.server = server;
        this.subscriber = subscriber;
        this.keys = writeUsersData(server);
        this.script = (String) server.adminCommand("SCRIPT", "LOAD", "return 'a script of the user'");
        server.adminCommand("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
        try {
            this.subscriberId = (Long) subscriber.call("CLIENT", "ID");
            subscriber.call("SUBSCRIBE", "users-channel");
        } catch (IOException e) {
            throw new UncheckedIOException("the user's subscriber could not subscribe", e);
        }
        this.dumps = dump(server, keys.keySet());
        this.config = server.adminCommand("CONFIG", "GET", "*");
        this.aclRules = server.adminCommand("ACL", "LIST");
        this.runId = FaultAdmin.runId(server);
    }

    /**
     * Starts a server of its own ({@link RedisServers#start()}) and writes the user's data to it.
     *
     * @return the server with the user's data; close it when done
     */
    public static UsersRedis start() {
        RedisServer server = RedisServers.start();
        RespConnection subscriber = null;
        try {
            subscriber = RespConnection.open(server.host(), server.port(), Duration.ofSeconds(30));
            return new UsersRedis(server, subscriber);
        } catch (IOException | RuntimeException e) {
            closeQuietly(subscriber);
            server.close();
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot connect the user's subscriber to " + server, io);
            }
            throw (RuntimeException) e;
        }
    }

    /** @return the server, as the user's own admin sees it (owned: the test support started it) */
    public RedisServer server() {
        return server;
    }

    /**
     * Runs {@code suite} through a JUnit launcher in this JVM with this server as REDIS_URL. Tests
     * that take their Redis from a {@link RedisTest} class get it; a JVM-wide
     * {@link RedisServers#shared()} server made before this run is not switched over.
     *
     * @return what happened, test by test
     */
    public Run runAsRedisUrl(List<? extends DiscoverySelector> suite) {
        Run run = new Run(suite);
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        asRedisUrl(server, () -> {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(suite).build(),
                    summary, run);
            return null;
        });
        run.summary = summary.getSummary();
        return run;
    }

    /**
     * Calls {@code body} with system property {@code redis.test.url} pointing at {@code server},
     * then puts the property back as it was.
     */
    public static <T> T asRedisUrl(RedisServer server, Supplier<T> body) {
        String previous = System.setProperty(RedisServers.URL_PROPERTY, server.uri());
        try {
            return body.get();
        } finally {
            if (previous == null) {
                System.clearProperty(RedisServers.URL_PROPERTY);
            } else {
                System.setProperty(RedisServers.URL_PROPERTY, previous);
            }
        }
    }

    /**
     * Checks the server is as {@link #start()} left it: the user's keys and nothing else, each
     * with its value (DUMP) and its TTL; the user's script, the configuration and the ACL rules
     * unchanged; the same process (run id); the user's subscriber still connected and subscribed.
     */
    public void assertLeftIntact() {
        assertThat(server.keys("*")).as("the user's keys and nothing else")
                .containsExactlyInAnyOrderElementsOf(keys.keySet());
        assertThat(dump(server, keys.keySet())).as("DUMP of every user key")
                .allSatisfy((key, value) -> assertThat(value).as(key).isEqualTo(dumps.get(key)));
        keys.forEach((key, expires) -> assertThat(server.pttl(key)).as("PTTL of %s", key)
                .satisfies(pttl -> assertThat(expires ? pttl > 0 : pttl == -1).isTrue()));
        assertThat(server.adminCommand("SCRIPT", "EXISTS", script)).as("the user's script").isEqualTo(List.of(1L));
        assertThat(server.adminCommand("CONFIG", "GET", "*")).as("CONFIG GET *").isEqualTo(config);
        assertThat(server.adminCommand("ACL", "LIST")).as("ACL LIST").isEqualTo(aclRules);
        assertThat(FaultAdmin.runId(server)).as("never restarted").isEqualTo(runId);
        assertThat((String) server.adminCommand("CLIENT", "LIST")).as("the user's subscriber is still connected")
                .containsPattern("(?m)^id=" + subscriberId + " .* sub=1 ");
    }

    @Override
    public void close() {
        try {
            closeQuietly(subscriber);
        } finally {
            server.close();
        }
    }

    private static void closeQuietly(RespConnection connection) {
        if (connection == null) {
            return;
        }
        try {
            connection.close();
        } catch (IOException | RuntimeException e) {
            // the server goes next anyway
        }
    }

    /** @return the user's keys, each with whether it has a TTL */
    private static Map<String, Boolean> writeUsersData(RedisServer server) {
        Map<String, Boolean> keys = new LinkedHashMap<>();
        server.adminCommand("SET", "user:string", "hello");
        keys.put("user:string", false);
        server.adminCommand("SET", "user:string-ttl", "bye", "EX", TTL);
        keys.put("user:string-ttl", true);
        server.adminCommand("HSET", "user:hash", "a", "1", "b", "2");
        keys.put("user:hash", false);
        server.adminCommand("ZADD", "user:zset", "1", "a", "2", "b");
        server.adminCommand("EXPIRE", "user:zset", TTL);
        keys.put("user:zset", true);
        // The library's default prefix, and a semaphore of the sample's name, in use by the user.
        server.adminCommand("SET", "semaphore:orders", "not a semaphore");
        keys.put("semaphore:orders", false);
        server.adminCommand("HSET", "semaphore:{reports}:state", "used", "2", "limit", "3");
        server.adminCommand("EXPIRE", "semaphore:{reports}:state", TTL);
        keys.put("semaphore:{reports}:state", true);
        server.adminCommand("ZADD", "semaphore:{reports}:holders", "1700000000000", "someone");
        keys.put("semaphore:{reports}:holders", false);
        // Another run of the suite, right now, on the same server.
        server.adminCommand("SET", RedisServer.KEY_PREFIX_STEM + "0000cafe:{reports}:state", "theirs", "EX", TTL);
        keys.put(RedisServer.KEY_PREFIX_STEM + "0000cafe:{reports}:state", true);
        // More keys than one SCAN page.
        List<String> bulk = new ArrayList<>(List.of("MSET"));
        for (int i = 0; i < BULK_KEYS; i++) {
            bulk.add("user:bulk:" + i);
            bulk.add(String.valueOf(i));
            keys.put("user:bulk:" + i, false);
        }
        server.adminCommand(bulk.toArray(String[]::new));
        return keys;
    }

    private static Map<String, byte[]> dump(RedisServer server, Set<String> keys) {
        Map<String, byte[]> dumps = new HashMap<>();
        try (RedisConnection connection = server.connectionFactory().getConnection()) {
            for (String key : keys) {
                dumps.put(key, connection.keyCommands().dump(key.getBytes(StandardCharsets.UTF_8)));
            }
        }
        return dumps;
    }

    /** What a run of {@link #runAsRedisUrl(List)} did, test by test. */
    public static final class Run implements TestExecutionListener {

        private final List<? extends DiscoverySelector> suite;
        private final Map<String, String> aborted = new ConcurrentHashMap<>();
        private final List<String> failed = new CopyOnWriteArrayList<>();
        /** "class#method" of every test that finished, whatever its outcome. */
        private final Set<String> ran = ConcurrentHashMap.newKeySet();
        private TestExecutionSummary summary;

        private Run(List<? extends DiscoverySelector> suite) {
            this.suite = List.copyOf(suite);
        }

        @Override
        public void executionFinished(TestIdentifier test, TestExecutionResult result) {
            test.getSource().filter(MethodSource.class::isInstance).map(MethodSource.class::cast)
                    .ifPresent(method -> ran.add(method.getClassName() + "#" + method.getMethodName()));
            String reason = result.getThrowable().map(String::valueOf).orElse("");
            switch (result.getStatus()) {
                case ABORTED -> aborted.put(test.getDisplayName(), reason);
                case FAILED -> failed.add(test.getDisplayName() + ": " + reason);
                default -> { }
            }
        }

        /** @return display name to reason of every test that skipped itself (a failed assumption) */
        public Map<String, String> aborted() {
            return Map.copyOf(aborted);
        }

        /**
         * Fails unless every test passed or skipped itself, and every selector found tests: a
         * renamed test would otherwise drop out of the run unseen.
         */
        public void assertPassed() {
            if (!failed.isEmpty() || summary.getTotalFailureCount() > 0) {
                fail("the suite failed on a REDIS_URL server: " + failed);
            }
            assertThat(summary.getTestsFoundCount())
                    .isEqualTo(summary.getTestsSucceededCount() + summary.getTestsAbortedCount());
            for (DiscoverySelector selector : suite) {
                String wanted = selector instanceof MethodSelector method
                        ? method.getClassName() + "#" + method.getMethodName()
                        : ((ClassSelector) selector).getClassName();
                assertThat(ran).as("tests run").anyMatch(test -> test.equals(wanted) || test.startsWith(wanted + "#"));
            }
        }
    }
}
