package io.github.redissemaphore.core;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Registries on fresh connection factories (each a separate "JVM"), closed after each test, with
 * the target's key prefix, and a semaphore name of the test's own.
 */
abstract class SemaphoreTestBase {

    private final List<SemaphoreRegistry> registries = new ArrayList<>();
    private final RedisTarget target;
    protected String name;

    protected SemaphoreTestBase(RedisTarget target) {
        this.target = target;
    }

    /** @return the Redis this test runs on */
    protected RedisTarget target() {
        return target;
    }

    @BeforeEach
    void nameAfterTest(TestInfo test) {
        name = test.getTestMethod().orElseThrow().getName() + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void closeRegistries() {
        registries.forEach(SemaphoreRegistry::close);
        registries.clear();
    }

    /** @return a new registry on a new connection factory, fast waiter ticks for tests */
    protected SemaphoreRegistry newRegistry(UnaryOperator<SemaphoreRegistry.Builder> customizer) {
        SemaphoreRegistry registry = customizer.apply(SemaphoreRegistry.builder(target().newConnectionFactory())
                .keyPrefix(target().keyPrefix())
                .waiterTick(java.time.Duration.ofMillis(200))
                .waiterHeartbeat(java.time.Duration.ofSeconds(2))).build();
        registries.add(registry);
        return registry;
    }

    protected SemaphoreRegistry newRegistry() {
        return newRegistry(builder -> builder);
    }

    /** @return the pattern of every key of semaphore {@code semaphore} of the registries here */
    protected String keysOf(String semaphore) {
        return target().keyPrefix() + ":{" + semaphore + "}:*";
    }

    /** Every key of the test's semaphore carries a TTL: nothing stays in Redis forever. */
    protected void assertEveryKeyExpires() {
        List<String> keys = target().keys(keysOf(name));
        for (String key : keys) {
            assertThat(target().pttl(key)).as("PTTL of %s", key).isPositive();
        }
    }
}
