package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The runtime rate ({@link RedisSemaphore#overrideRateLimit}, R4 of {@code _rate.lua}), through two
 * registries on connections of their own standing for two JVMs: one sets it, the other's grants
 * follow it at once (a raise serves its queue at once, a lower one refuses it); clearing it brings
 * the configured rate back; the state key keeps no TTL while it is set; bad input is refused naming
 * the argument, with nothing written. Each window is a minute long, so nothing ages out during a test.
 */
@RedisTest
class RateOverrideTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    private final RedisServer server;
    private final RaceFixture fixture;
    private final StringRedisTemplate redis;
    private String name;

    RateOverrideTest(RedisServer server) {
        this.server = server;
        this.fixture = new RaceFixture(server);
        this.redis = new StringRedisTemplate(server.connectionFactory());
    }

    @BeforeEach
    void nameAfterTest(TestInfo test) {
        name = RaceFixture.nameAfter(test);
    }

    @AfterEach
    void closeAll() {
        fixture.close();
    }

    private static SemaphoreSettings rated(int rate) {
        return new SemaphoreSettings(5, Duration.ofSeconds(30), Duration.ofSeconds(20), true, true)
                .withRateLimit(rate, MINUTE);
    }

    private String stateKey() {
        return SemaphoreKeys.of(fixture.prefix(), name).all().get(1);
    }

    private static void takeAndRelease(RedisSemaphore semaphore) {
        semaphore.tryAcquire().orElseThrow().release();
    }

    @Test
    void theOtherJvmFollowsTheRuntimeRateAtOnceAndTheConfiguredOneOnceCleared() {
        RedisSemaphore setter = fixture.registry(server.connectionFactory()).semaphore(name, rated(2));
        RedisSemaphore other = fixture.registry(server.connectionFactory()).semaphore(name, rated(2));
        takeAndRelease(other);
        takeAndRelease(other);
        assertThat(other.tryAcquire()).as("configured: 2 per minute").isEmpty();

        setter.overrideRateLimit(4, MINUTE);
        takeAndRelease(other);
        takeAndRelease(other);
        assertThat(other.tryAcquire()).as("the runtime rate, 4 per minute, counts the grants made before").isEmpty();
        SemaphoreState.RateWindow window = other.state().rateWindow();
        assertThat(window.grants()).isEqualTo(4);
        assertThat(window.rateLimit()).isEqualTo(4);
        assertThat(window.ratePeriod()).isEqualTo(MINUTE);
        assertThat(window.overridden()).isTrue();
        assertThat(redis.getExpire(stateKey())).as("no TTL while a runtime rate is set").isEqualTo(-1);

        // A raise serves the other JVM's waiter at once, in the call that sets it.
        CompletableFuture<Permit> waiter = other.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> other.state().waiters().size() == 1);
        setter.overrideRateLimit(5, MINUTE);
        assertThat(waiter).succeedsWithin(Duration.ofSeconds(10)).satisfies(Permit::release);
        assertThat(other.tryAcquire()).as("5 granted in the window").isEmpty();

        setter.clearRateLimitOverride();
        assertThat(other.tryAcquire()).as("configured again: 5 grants are past 2").isEmpty();
        window = other.state().rateWindow();
        assertThat(window.rateLimit()).isEqualTo(2);
        assertThat(window.overridden()).isFalse();
        assertThat(redis.opsForHash().hasKey(stateKey(), " rover")).isFalse();
        assertThat(redis.getExpire(stateKey())).as("its TTL is back").isPositive();

        // A runtime rate with a shorter window: the grants of the last minute age out of it.
        setter.overrideRateLimit(100, Duration.ofMillis(100));
        await().atMost(Duration.ofSeconds(10)).until(() -> other.tryAcquire().map(permit -> {
            permit.release();
            return true;
        }).orElse(false));
        setter.clearRateLimitOverride();
    }

    @Test
    void aRuntimeRateOutlivesAnIdleSemaphoreAndAJvmConfiguredWithoutARate() {
        RedisSemaphore setter = fixture.registry(server.connectionFactory()).semaphore(name, rated(10));
        setter.overrideRateLimit(1, MINUTE);
        // A JVM configured without a rate neither drops it nor gives the state key its TTL back.
        RedisSemaphore plain = fixture.registry(server.connectionFactory()).semaphore(name,
                new SemaphoreSettings(5, Duration.ofSeconds(30), Duration.ofSeconds(20), true, true));
        takeAndRelease(plain);
        assertThat(redis.getExpire(stateKey())).isEqualTo(-1);
        assertThat(redis.opsForHash().get(stateKey(), " rover")).isEqualTo("1 60000");
        takeAndRelease(setter);
        assertThat(setter.tryAcquire()).as("1 per minute, set by the operator").isEmpty();
        setter.clearRateLimitOverride();
        takeAndRelease(setter);
    }

    @Test
    void badInputIsRefusedNamingTheArgumentWithNothingWritten() {
        RedisSemaphore rated = fixture.registry(server.connectionFactory()).semaphore(name, rated(2));
        assertThatThrownBy(() -> rated.overrideRateLimit(0, MINUTE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rateLimit").hasMessageContaining("100000");
        assertThatThrownBy(() -> rated.overrideRateLimit(100_001, MINUTE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rateLimit");
        assertThatThrownBy(() -> rated.overrideRateLimit(5, Duration.ofMillis(99)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ratePeriod");
        assertThatThrownBy(() -> rated.overrideRateLimit(5, Duration.ofDays(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ratePeriod");
        assertThatThrownBy(() -> rated.overrideRateLimit(5, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ratePeriod");
        RedisSemaphore plain = fixture.registry(server.connectionFactory()).semaphore(name + "-plain",
                SemaphoreSettings.DEFAULTS);
        assertThatThrownBy(() -> plain.overrideRateLimit(5, MINUTE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rateLimit");
        assertThatThrownBy(plain::clearRateLimitOverride).isInstanceOf(IllegalStateException.class);
        assertThat(redis.keys(fixture.prefix() + "*")).as("nothing written").isEmpty();
    }
}
