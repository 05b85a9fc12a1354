package io.github.redissemaphore.actuate;

import io.github.redissemaphore.actuate.health.SemaphoresHealthIndicator;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The {@code semaphores} health contributor on a real Redis, paused to make renewals fail. */
@RedisTest
class SemaphoresHealthIndicatorTest {

    private final RedisServer shared;

    SemaphoresHealthIndicatorTest(RedisServer shared) {
        this.shared = shared;
    }

    @Test
    void upWithWhatThisJvmHoldsAndWaitsFor() {
        StarterContexts.on(shared).run(context -> {
            SemaphoresHealthIndicator health = context.getBean(SemaphoresHealthIndicator.class);
            assertThat(BootLine.status(health)).as("no semaphore used yet").isEqualTo("UP");
            assertThat(BootLine.details(health)).as("no semaphore used yet").isEmpty();

            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            Permit held = registry.semaphore("health-up").tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiting = registry.semaphore("health-up").acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> registry.semaphore("health-up").localState().waiters() == 1);

            assertThat(BootLine.status(health)).isEqualTo("UP");
            assertThat(BootLine.details(health)).containsEntry("health-up",
                    Map.of("permitsHeld", 1, "waiters", 1, "inboxSubscribed", true));
            waiting.cancel(true);
            held.release();
        });
    }

    /**
     * Lease 18 s, renewed every 6 s: the first renewal goes out during a 15 s pause and stays
     * unanswered; a third of the lease later (12 s after the grant) the lease is at risk: DOWN.
     * When the pause ends, the renewal is answered, 2.5 s before the lease would have been
     * given up: UP, and the permit is still held.
     */
    @Test
    void downWhileRenewalsOfAHeldPermitFailForAThirdOfTheLeaseThenUpAgain(@Dedicated RedisServer server) {
        StarterContexts.on(server)
                .withPropertyValues("distributed-semaphore.semaphores.paused.lease-time=18s")
                .run(context -> {
                    SemaphoresHealthIndicator health = context.getBean(SemaphoresHealthIndicator.class);
                    Permit permit = context.getBean(SemaphoreRegistry.class).semaphore("paused").tryAcquire()
                            .orElseThrow();
                    server.pause(Duration.ofSeconds(15));
                    assertThat(BootLine.status(health)).isEqualTo("UP");

                    await().atMost(Duration.ofSeconds(14)).until(() -> BootLine.status(health).equals("DOWN"));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> paused = (Map<String, Object>) BootLine.details(health).get("paused");
                    assertThat(paused).containsEntry("permitsHeld", 1).containsEntry("leasesAtRisk", true)
                            .containsKey("renewalFailingSince");

                    await().atMost(Duration.ofSeconds(10)).until(() -> BootLine.status(health).equals("UP"));
                    assertThat(permit.isHeld()).isTrue();
                    assertThat(BootLine.details(health).get("paused"))
                            .isEqualTo(Map.of("permitsHeld", 1, "waiters", 0, "inboxSubscribed", true));
                    permit.release();
                });
    }

    @Test
    void offByProperty() {
        StarterContexts.on(shared).withPropertyValues("management.health.semaphores.enabled=false")
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(SemaphoresHealthIndicator.class)
                        .hasSingleBean(SemaphoreRegistry.class));
    }
}
