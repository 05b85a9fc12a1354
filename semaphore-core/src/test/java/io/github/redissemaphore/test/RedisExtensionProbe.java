package io.github.redissemaphore.test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Tests run only by {@link RedisSupportTest#theExtensionClosesWhatItStartedAndCleansBetweenTests()},
 * through a JUnit launcher of its own, which then checks what the extension left behind. Its name
 * matches no test pattern of Surefire, so a build does not run it directly; run any other way it
 * skips itself.
 */
@RedisTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisExtensionProbe {

    static volatile boolean enabled;
    static final List<Integer> ports = new CopyOnWriteArrayList<>();
    static final List<LettuceConnectionFactory> factories = new CopyOnWriteArrayList<>();
    static final List<List<String>> keysSeenBySecondTest = new CopyOnWriteArrayList<>();

    @BeforeEach
    void onlyWhenRunByTheOuterTest() {
        assumeTrue(enabled, "run by RedisSupportTest only");
    }

    @Test
    @Order(1)
    void writesThroughSharedAndDedicatedServers(RedisServer shared, @Dedicated RedisServer dedicated) {
        if (shared.managed()) {
            ports.add(shared.port());
        }
        ports.add(dedicated.port());
        LettuceConnectionFactory factory = shared.connectionFactory();
        factories.add(factory);
        factories.add(dedicated.connectionFactory());
        new StringRedisTemplate(factory).opsForValue().set(shared.keyPrefix() + ":leftover", "1");
    }

    @Test
    @Order(2)
    void seesNoKeyOfTheTestBefore(RedisServer shared) {
        keysSeenBySecondTest.add(shared.keys(shared.keyPrefix() + ":*"));
    }

    @Test
    @Order(3)
    void failsWithADedicatedServer(@Dedicated RedisServer dedicated) {
        ports.add(dedicated.port());
        throw new AssertionError("deliberate failure: the server must be closed all the same");
    }

    @Test
    @Order(4)
    void usesTheCluster(RedisCluster cluster) {
        cluster.nodes().forEach(node -> ports.add(node.port()));
        factories.add(cluster.connectionFactory());
    }

    @Test
    @Order(5)
    void writesAKeyOutsideItsPrefix(RedisServer shared) {
        shared.assumeOwned("writing a key outside the prefix");
        new StringRedisTemplate(shared.connectionFactory()).opsForValue().set("stray", "1");
    }
}
