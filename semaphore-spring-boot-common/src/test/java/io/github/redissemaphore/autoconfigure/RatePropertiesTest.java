package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static io.github.redissemaphore.autoconfigure.InvalidPropertiesFailureReportTest.failureReport;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code rate-limit} and {@code rate-period}, in {@code defaults} and per semaphore: they reach the
 * settings of the semaphores (and of each key of a keyed one), left out there is no rate, and one
 * without the other, or a rate on a capped semaphore, stops the start-up naming the property as
 * written and the one missing, before anything talks to Redis. A caller refused for the rate is
 * told so, and when the window frees a slot.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension.class)
class RatePropertiesTest {

    private static final String DEFAULTS = "distributed-semaphore.defaults.";
    private static final String PAYMENTS = "distributed-semaphore.semaphores.payments.";

    private final ApplicationContextRunner runner;

    RatePropertiesTest(RedisServer server) {
        this.runner = StarterContexts.on(server);
    }

    @Test
    void leftOutThereIsNoRate() {
        runner.run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("anything").rateLimit()).isZero();
            assertThat(registry.settingsOf("anything").ratePeriod()).isZero();
            assertThat(registry.settingsOf("anything").limitsRate()).isFalse();
        });
    }

    @Test
    void theDefaultsReachEverySemaphoreAndASemaphoresOwnValuesWin() {
        runner.withPropertyValues(DEFAULTS + "rate-limit=100", DEFAULTS + "rate-period=1m", PAYMENTS + "permits=5",
                PAYMENTS + "rate-limit=10", "distributed-semaphore.semaphores.exports.rate-period=1s").run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("anything").rateLimit()).isEqualTo(100);
            assertThat(registry.settingsOf("anything").ratePeriod()).isEqualTo(Duration.ofMinutes(1));
            assertThat(registry.settingsOf("payments").rateLimit()).isEqualTo(10);
            assertThat(registry.settingsOf("payments").ratePeriod()).as("left out: the defaults'")
                    .isEqualTo(Duration.ofMinutes(1));
            assertThat(registry.settingsOf("exports:acme").rateLimit()).as("each key's rate").isEqualTo(100);
            assertThat(registry.settingsOf("exports:acme").ratePeriod()).isEqualTo(Duration.ofSeconds(1));
        });
    }

    @Test
    void aRateLimitWithoutItsPeriodNamesTheMissingOne(CapturedOutput output) {
        assertThat(failureReport(output, "--" + PAYMENTS + "rate-limit=100"))
                .contains("Property: " + PAYMENTS + "rate-limit" + System.lineSeparator())
                .contains("Value: \"100\"")
                .contains("Reason: must be set together with " + PAYMENTS + "rate-period, its window (both or neither)");
        assertThat(failureReport(output, "--" + DEFAULTS + "rate-period=1m"))
                .contains("Property: " + DEFAULTS + "rate-period" + System.lineSeparator())
                .contains("Reason: must be set together with " + DEFAULTS
                        + "rate-limit, the grants per window (both or neither)");
        assertThat(failureReport(output, "--" + DEFAULTS + "rate-period=1m", "--" + PAYMENTS + "rate-limit=5"))
                .as("a semaphore's rate-limit with the defaults' period is whole, the defaults' period alone is not")
                .doesNotContain("Property: " + PAYMENTS + "rate-limit")
                .contains("Property: " + DEFAULTS + "rate-period" + System.lineSeparator());
    }

    @Test
    void aRateOnACappedSemaphoreIsRefused(CapturedOutput output) {
        assertThat(failureReport(output, "--" + PAYMENTS + "rate-limit=100", "--" + PAYMENTS + "rate-period=1m",
                "--" + PAYMENTS + "total-permits=10"))
                .contains("Property: " + PAYMENTS + "rate-limit" + System.lineSeparator())
                .contains("Reason: is not supported with " + PAYMENTS + "total-permits (a capped semaphore) yet");
    }

    @Test
    void aCallerThatDoesNotWaitIsRefusedForTheRateWithTheMomentASlotFrees() {
        runner.withPropertyValues(PAYMENTS + "permits=5", PAYMENTS + "rate-limit=2", PAYMENTS + "rate-period=1m")
                .run(context -> {
                    RedisSemaphore payments = context.getBean(SemaphoreRegistry.class).semaphore("payments");
                    try (Permit first = payments.tryAcquire().orElseThrow()) {
                        first.release();
                        try (Permit second = payments.tryAcquire().orElseThrow()) {
                            assertThat(second.isHeld()).isTrue();
                        }
                    }
                    assertThatThrownBy(payments::acquire).isInstanceOfSatisfying(SemaphoreRejectedException.class,
                            refused -> {
                                assertThat(refused.reason()).isEqualTo(SemaphoreRejectedException.Reason.RATE_LIMITED);
                                assertThat(refused.retryAfter()).hasValueSatisfying(after -> assertThat(after)
                                        .isGreaterThan(Duration.ofSeconds(50)).isLessThanOrEqualTo(Duration.ofMinutes(1)));
                                assertThat(refused.getMessage()).contains("2 grants per 60000 ms");
                            });
                });
    }
}
