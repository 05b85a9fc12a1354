package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * What a test that races registries against one Redis sets up and takes down for each of its
 * methods ({@link EngineRaceTest}, {@link LateReplyTest}): registries under the server's key prefix
 * (each on a connection factory of its own stands for a separate JVM), thread pools, the machine's
 * scheduling noise while the test runs, a semaphore name of the test's own, and the checks that
 * nothing is left: {@link #awaitIdle} in the semaphore, {@link #assertCleanKeys} in its keys.
 * Made in the test's constructor, {@link #close() closed} after each test.
 */
final class RaceFixture implements AutoCloseable {

    private final RedisServer server;
    /** The shared server's: the registries write no other key, on it or on a dedicated one. */
    private final String prefix;
    private final List<SemaphoreRegistry> registries = new ArrayList<>();
    private final List<ExecutorService> pools = new ArrayList<>();
    /** The machine's scheduling noise while the test runs, which widens the timing bounds. */
    private final SchedulingNoise noise = new SchedulingNoise();

    RaceFixture(RedisServer server) {
        this.server = server;
        this.prefix = server.keyPrefix();
    }

    /** @return the key prefix of every registry of the test */
    String prefix() {
        return prefix;
    }

    SchedulingNoise noise() {
        return noise;
    }

    /** @return a semaphore name of the test's own: its method's first 20 characters and a random suffix */
    static String nameAfter(TestInfo test) {
        String method = test.getTestMethod().orElseThrow().getName();
        return method.substring(0, Math.min(20, method.length())) + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** @return a registry on {@code factory} under the test's prefix, closed after the test */
    SemaphoreRegistry registry(RedisConnectionFactory factory) {
        return registry(factory, builder -> builder);
    }

    /** @return a registry on {@code factory} under the test's prefix, built as {@code how} says, closed after the test */
    SemaphoreRegistry registry(RedisConnectionFactory factory, UnaryOperator<SemaphoreRegistry.Builder> how) {
        return closeAfter(how.apply(SemaphoreRegistry.builder(factory).keyPrefix(prefix)).build());
    }

    /** @return a fixed pool of {@code threads}, shut down after the test */
    ExecutorService pool(int threads) {
        return closeAfter(Executors.newFixedThreadPool(threads));
    }

    /** @return {@code registry}, closed after the test */
    SemaphoreRegistry closeAfter(SemaphoreRegistry registry) {
        registries.add(registry);
        return registry;
    }

    /** @return {@code pool}, shut down after the test */
    <T extends ExecutorService> T closeAfter(T pool) {
        pools.add(pool);
        return pool;
    }

    /** Nothing held, nobody waiting, within 10 s: every permit came back, a grant found after its caller was answered too. */
    static void awaitIdle(RedisSemaphore semaphore, String when) {
        awaitIdle(semaphore, when, Duration.ofSeconds(10));
    }

    /** Nothing held, nobody waiting, within {@code atMost}. */
    static void awaitIdle(RedisSemaphore semaphore, String when, Duration atMost) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(5)).untilAsserted(() -> {
            SemaphoreState state = semaphore.state();
            assertThat(state.used()).as("used %s: %s", when, state).isZero();
            assertThat(state.holders()).as("holders %s", when).isEmpty();
            assertThat(state.waiters()).as("waiters %s", when).isEmpty();
        });
    }

    /**
     * The keys of semaphore {@code name} on the test's server keep the invariants (used is the sum of
     * the holders' counts), and nothing is held or queued in them.
     *
     * @return what the keys hold, for a test's further checks
     */
    ScriptSnapshot assertCleanKeys(String name, int limit) {
        ScriptSnapshot keys = ScriptSnapshot.take(server.connectionFactory(), SemaphoreKeys.of(prefix, name));
        assertThat(keys.violations(limit)).as("%s", keys).isEmpty();
        assertThat(keys.holders()).isEmpty();
        assertThat(keys.queue()).isEmpty();
        assertThat(keys.used()).isZero();
        return keys;
    }

    /** Stops the noise measure, shuts the pools down and closes the registries. */
    @Override
    public void close() {
        noise.close();
        pools.forEach(ExecutorService::shutdownNow);
        pools.clear();
        registries.forEach(SemaphoreRegistry::close);
        registries.clear();
    }
}
