package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@code max-waiters} and {@code reject-predicted-timeouts}, in {@code defaults} and per semaphore:
 * they reach the settings of the semaphores (and of each key of a keyed one), a semaphore's own
 * value wins over the defaults', and left out there is no bound. How a wrong value is reported is
 * {@link InvalidPropertiesFailureReportTest}'s.
 */
@RedisTest
class QueueBoundPropertiesTest {

    private static final String DEFAULTS = "distributed-semaphore.defaults.";
    private static final String REPORTS = "distributed-semaphore.semaphores.reports.";

    private final ApplicationContextRunner runner;

    QueueBoundPropertiesTest(RedisServer server) {
        this.runner = StarterContexts.on(server);
    }

    @Test
    void leftOutThereIsNoBoundAndNoPredictedRefusal() {
        runner.run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("anything").maxWaiters()).isZero();
            assertThat(registry.settingsOf("anything").boundsQueue()).isFalse();
            assertThat(registry.settingsOf("anything").rejectPredictedTimeouts()).isFalse();
        });
    }

    @Test
    void theDefaultsReachEverySemaphoreAndASemaphoresOwnValuesWin() {
        runner.withPropertyValues(DEFAULTS + "max-waiters=50", DEFAULTS + "reject-predicted-timeouts=true",
                REPORTS + "permits=3", "distributed-semaphore.semaphores.exports.max-waiters=4",
                "distributed-semaphore.semaphores.exports.reject-predicted-timeouts=false").run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("anything").maxWaiters()).isEqualTo(50);
            assertThat(registry.settingsOf("anything").rejectPredictedTimeouts()).isTrue();
            assertThat(registry.settingsOf("reports").maxWaiters()).as("left out: the defaults'").isEqualTo(50);
            assertThat(registry.settingsOf("reports").rejectPredictedTimeouts()).isTrue();
            assertThat(registry.settingsOf("exports").maxWaiters()).isEqualTo(4);
            assertThat(registry.settingsOf("exports:acme").maxWaiters()).as("each key's bound").isEqualTo(4);
            assertThat(registry.settingsOf("exports").rejectPredictedTimeouts()).isFalse();
        });
    }

    @Test
    void aCallerBeyondTheBoundIsRefusedAtOnceAsQueueFull() {
        runner.withPropertyValues(REPORTS + "permits=1", REPORTS + "wait-time=10s", REPORTS + "max-waiters=1")
                .run(context -> {
                    RedisSemaphore reports = context.getBean(SemaphoreRegistry.class).semaphore("reports");
                    try (Permit held = reports.tryAcquire().orElseThrow()) {
                        CompletableFuture<Permit> waiting = reports.acquireAsync(1, Duration.ofSeconds(10));
                        await().until(() -> reports.state().waiters().size() == 1);
                        long start = System.nanoTime();
                        assertThatThrownBy(reports::acquire).isInstanceOfSatisfying(SemaphoreRejectedException.class,
                                refused -> assertThat(refused.reason())
                                        .isEqualTo(SemaphoreRejectedException.Reason.QUEUE_FULL));
                        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("refused at once, not waited")
                                .isLessThan(Duration.ofSeconds(5));
                        held.release();
                        try (Permit served = waiting.get(10, TimeUnit.SECONDS)) {
                            assertThat(served.isHeld()).as("the waiter kept its place").isTrue();
                        }
                    }
                });
    }
}
