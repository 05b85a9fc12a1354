package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.WhenUnavailable;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code when-unavailable} and {@code local-permits}, in {@code defaults} and per semaphore: they
 * reach the settings of the semaphores (and of each key of a keyed one), a semaphore's own value
 * wins over the defaults', and left out a semaphore rejects while Redis cannot be reached, with a
 * share of the fleet should it be switched to local. How a wrong value is reported is
 * {@link InvalidPropertiesFailureReportTest}'s and {@link DistributedSemaphorePropertiesValidationTest}'s.
 */
@RedisTest
class DegradedModePropertiesTest {

    private static final String DEFAULTS = "distributed-semaphore.defaults.";
    private static final String REPORTS = "distributed-semaphore.semaphores.reports.";

    private final ApplicationContextRunner runner;

    DegradedModePropertiesTest(RedisServer server) {
        this.runner = StarterContexts.on(server);
    }

    @Test
    void leftOutASemaphoreRejectsWithAShareOfTheFleet() {
        runner.run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("anything").whenUnavailable()).isEqualTo(WhenUnavailable.REJECT);
            assertThat(registry.settingsOf("anything").localPermits()).as("a share of the fleet").isZero();
        });
    }

    @Test
    void theDefaultsReachEverySemaphoreAndASemaphoresOwnValuesWin() {
        runner.withPropertyValues(DEFAULTS + "permits=4", DEFAULTS + "when-unavailable=local",
                DEFAULTS + "local-permits=2", REPORTS + "permits=3",
                "distributed-semaphore.semaphores.exports.permits=10",
                "distributed-semaphore.semaphores.exports.when-unavailable=ALLOW",
                "distributed-semaphore.semaphores.exports.local-permits=5").run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("anything").whenUnavailable()).isEqualTo(WhenUnavailable.LOCAL);
            assertThat(registry.settingsOf("anything").localPermits()).isEqualTo(2);
            assertThat(registry.settingsOf("reports").whenUnavailable()).as("left out: the defaults'")
                    .isEqualTo(WhenUnavailable.LOCAL);
            assertThat(registry.settingsOf("reports").localPermits()).as("the defaults' share, within its 3 permits")
                    .isEqualTo(2);
            assertThat(registry.settingsOf("exports").whenUnavailable()).as("in upper case too")
                    .isEqualTo(WhenUnavailable.ALLOW);
            assertThat(registry.settingsOf("exports").localPermits()).isEqualTo(5);
            assertThat(registry.settingsOf("exports:acme").whenUnavailable()).as("each key's")
                    .isEqualTo(WhenUnavailable.ALLOW);
            assertThat(registry.settingsOf("exports:acme").localPermits()).isEqualTo(5);
        });
    }

    @Test
    void aShareOfAllThePermitsIsAllowed() {
        runner.withPropertyValues(REPORTS + "permits=3", REPORTS + "when-unavailable=local", REPORTS + "local-permits=3")
                .run(context -> assertThat(context.getBean(SemaphoreRegistry.class).settingsOf("reports").localPermits())
                        .isEqualTo(3));
    }
}
