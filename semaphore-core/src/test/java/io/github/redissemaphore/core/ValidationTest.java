package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Every input rule of DESIGN.md §3: a clear message naming the argument, and nothing sent to Redis. */
@RedisTest
class ValidationTest extends SemaphoreTestBase {

    ValidationTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "with space", "tab\there", "new\nline", "{tag}", "a}b", "ctrl\u0001"})
    void badNamesAreRefused(String bad) {
        SemaphoreRegistry registry = newRegistry();
        assertThatIllegalArgumentException().isThrownBy(() -> registry.semaphore(bad))
                .withMessageStartingWith("name must");
    }

    @Test
    void namesUpTo200CharactersAreAccepted() {
        SemaphoreRegistry registry = newRegistry();
        assertThat(registry.semaphore("x".repeat(200)).tryAcquire()).isPresent();
        assertThatIllegalArgumentException().isThrownBy(() -> registry.semaphore("x".repeat(201)))
                .withMessage("name must be 1 to 200 characters long, but was 201 characters");
        assertThatIllegalArgumentException().isThrownBy(() -> registry.semaphore(null))
                .withMessageContaining("name must be 1 to 200 characters long, but was null");
    }

    @Test
    void badKeyPrefixIsRefused() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> SemaphoreRegistry.builder(target().newConnectionFactory()).keyPrefix("my prefix"))
                .withMessageStartingWith("keyPrefix must not contain");
    }

    @Test
    void settingsOutOfRangeAreRefused() {
        Duration lease = Duration.ofSeconds(30);
        assertThatIllegalArgumentException().isThrownBy(() -> new SemaphoreSettings(0, lease, Duration.ZERO, true, true))
                .withMessage("permits must be between 1 and 1000000, but was 0");
        assertThatIllegalArgumentException().isThrownBy(() -> new SemaphoreSettings(1_000_001, lease, Duration.ZERO, true, true))
                .withMessage("permits must be between 1 and 1000000, but was 1000001");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new SemaphoreSettings(1, Duration.ofMillis(99), Duration.ZERO, true, true))
                .withMessage("leaseTime must be between 100 ms and 24 h (86400000 ms), but was 99 ms");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new SemaphoreSettings(1, Duration.ofHours(25), Duration.ZERO, true, true))
                .withMessageStartingWith("leaseTime must be between");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new SemaphoreSettings(1, lease, Duration.ofMillis(-1), true, true))
                .withMessage("waitTime must be between 0 ms and 24 h (86400000 ms), but was -1 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> new SemaphoreSettings(1, null, Duration.ZERO, true, true))
                .withMessage("leaseTime must not be null");
        assertThat(new SemaphoreSettings(1_000_000, Duration.ofHours(24), Duration.ofHours(24), false, false).permits())
                .isEqualTo(1_000_000);
        assertThatIllegalArgumentException().isThrownBy(() -> SemaphoreSettings.DEFAULTS.withMaxWaiters(-1))
                .withMessage("maxWaiters must be 0 (no bound) or between 1 and 1000000, but was -1");
        assertThatIllegalArgumentException().isThrownBy(() -> SemaphoreSettings.DEFAULTS.withMaxWaiters(1_000_001))
                .withMessage("maxWaiters must be 0 (no bound) or between 1 and 1000000, but was 1000001");
        assertThat(SemaphoreSettings.DEFAULTS.withMaxWaiters(1_000_000).maxWaiters()).isEqualTo(1_000_000);
        assertThat(SemaphoreSettings.DEFAULTS.maxWaiters()).as("no bound by default").isZero();
        assertThat(SemaphoreSettings.DEFAULTS.rejectPredictedTimeouts()).isFalse();
    }

    @Test
    void aDegradedModeOutOfRangeIsRefused() {
        SemaphoreSettings three = SemaphoreSettings.DEFAULTS.withPermits(3);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> three.withWhenUnavailable(WhenUnavailable.LOCAL, 4))
                .withMessage("localPermits must be 0 (a share of the fleet) or between 1 and 3 (permits), but was 4");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> three.withWhenUnavailable(WhenUnavailable.LOCAL, -1))
                .withMessage("localPermits must be 0 (a share of the fleet) or between 1 and 3 (permits), but was -1");
        assertThatIllegalArgumentException().isThrownBy(() -> three.withWhenUnavailable(null))
                .withMessage("whenUnavailable must be one of reject, local, allow, but was null");
        // Fewer permits than the share: refused too, whichever comes first.
        assertThatIllegalArgumentException()
                .isThrownBy(() -> three.withWhenUnavailable(WhenUnavailable.LOCAL, 3).withPermits(2))
                .withMessageStartingWith("localPermits must be 0");
        assertThat(SemaphoreSettings.DEFAULTS.whenUnavailable()).as("the default").isEqualTo(WhenUnavailable.REJECT);
        assertThat(three.withWhenUnavailable(WhenUnavailable.LOCAL, 3).localPermits()).isEqualTo(3);
    }

    @Test
    void replicationSettingsOutOfRangeAreRefused() {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS;
        assertThat(settings.replicas()).isZero();
        assertThat(settings.replicationTimeout()).isEqualTo(Duration.ofMillis(100));
        assertThatIllegalArgumentException().isThrownBy(() -> settings.withReplicas(-1, Duration.ofMillis(100)))
                .withMessage("replicas must be between 0 and 100, but was -1");
        assertThatIllegalArgumentException().isThrownBy(() -> settings.withReplicas(101, Duration.ofMillis(100)))
                .withMessage("replicas must be between 0 and 100, but was 101");
        assertThatIllegalArgumentException().isThrownBy(() -> settings.withReplicas(1, Duration.ZERO))
                .withMessage("replicationTimeout must be between 1 ms and 60000 ms, but was 0 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> settings.withReplicas(1, Duration.ofMinutes(2)))
                .withMessage("replicationTimeout must be between 1 ms and 60000 ms, but was 120000 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> settings.withReplicas(1, null))
                .withMessage("replicationTimeout must not be null");
        assertThat(settings.withReplicas(2, Duration.ofSeconds(1)).withPermits(3))
                .extracting(SemaphoreSettings::replicas, SemaphoreSettings::replicationTimeout)
                .containsExactly(2, Duration.ofSeconds(1));
    }

    @Test
    void badBuilderDurationsAreRefused() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> SemaphoreRegistry.builder(target().newConnectionFactory())
                        .waiterTick(Duration.ofMillis(10)).build())
                .withMessageStartingWith("waiterTick must be between 50 ms and");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> SemaphoreRegistry.builder(target().newConnectionFactory())
                        .waiterTick(Duration.ofSeconds(1)).waiterHeartbeat(Duration.ofMillis(1500)).build())
                .withMessageStartingWith("waiterHeartbeat must be at least twice waiterTick");
    }

    @Test
    void badCallArgumentsAreRefusedWithoutTouchingRedis() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3));
        List<CommandMonitor> monitors = target().monitors();
        try {
            List<String> sent = CommandMonitor.commandsDuring(monitors, () -> {
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.tryAcquire(0, Duration.ZERO))
                        .withMessage("permits must be between 1 and 3 (the semaphore's permits), but was 0");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.tryAcquire(4, Duration.ZERO))
                        .withMessage("permits must be between 1 and 3 (the semaphore's permits), but was 4");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.acquireAsync(1, Duration.ofMillis(-5)))
                        .withMessage("maxWait must be between 0 ms and 24 h (86400000 ms), but was -5 ms");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.tryAcquire(1, Duration.ofDays(2)))
                        .withMessageStartingWith("maxWait must be between");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.tryAcquire(1, null))
                        .withMessage("maxWait must not be null");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.overrideLimit(0))
                        .withMessage("limit must be between 1 and 1000000, but was 0");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.overrideLimit(1_000_001))
                        .withMessage("limit must be between 1 and 1000000, but was 1000001");
                assertThatIllegalArgumentException().isThrownBy(() -> semaphore.overrideLimit(-3))
                        .withMessage("limit must be between 1 and 1000000, but was -3");
            });
            assertThat(sent).isEmpty();
        } finally {
            for (CommandMonitor monitor : monitors) {
                monitor.close();
            }
        }
        assertThat(target().keys(keysOf(name))).isEmpty();
    }

    @Test
    void differentSettingsForASemaphoreInUseAreRefused() {
        SemaphoreRegistry registry = newRegistry();
        registry.semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(2));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> registry.semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3)))
                .withMessageContaining("semaphore '" + name + "' is already used in this JVM with");
    }
}
