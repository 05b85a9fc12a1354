package io.github.redissemaphore.actuate.health;

import io.github.redissemaphore.autoconfigure.health.DistributedSemaphoreHealthAutoConfiguration;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.WhenUnavailable;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.starter.LocalStates;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code semaphores} health contributor on a real Redis, paused to make renewals fail. Each starter
 * has its own (Boot 4 moved the health API), in the same package and by the same name: this source is
 * compiled and run by both starters, against their line (see their poms), and not by the common module.
 */
@RedisTest
class SemaphoresHealthIndicatorTest {

    private final RedisServer shared;

    SemaphoresHealthIndicatorTest(RedisServer shared) {
        this.shared = shared;
    }

    /** @return the contexts of the shared tests with the starter's health contributor as well */
    private static ApplicationContextRunner starter(RedisServer server) {
        return StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(DistributedSemaphoreHealthAutoConfiguration.class));
    }

    /** @return the status code of the semaphores health contributor now, e.g. "UP" (the same source on every line) */
    private static String status(SemaphoresHealthIndicator indicator) {
        return indicator.health().getStatus().getCode();
    }

    /** @return the details of the semaphores health contributor now */
    private static Map<String, Object> details(SemaphoresHealthIndicator indicator) {
        return indicator.health().getDetails();
    }

    /** With Actuator, the starter adds the contributor to the beans the shared auto-configuration makes. */
    @Test
    void createdWithTheOtherBeans() {
        starter(shared).run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(SemaphoreRegistry.class)
                .hasSingleBean(SemaphoresHealthIndicator.class));
    }

    @Test
    void upWithWhatThisJvmHoldsAndWaitsFor() {
        starter(shared).run(context -> {
            SemaphoresHealthIndicator health = context.getBean(SemaphoresHealthIndicator.class);
            assertThat(status(health)).as("no semaphore used yet").isEqualTo("UP");
            assertThat(details(health)).as("no semaphore used yet").isEmpty();

            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            Permit held = registry.semaphore("health-up").tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiting = registry.semaphore("health-up").acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> registry.semaphore("health-up").localState().waiters() == 1);

            assertThat(status(health)).isEqualTo("UP");
            assertThat(details(health)).containsEntry("health-up",
                    Map.of("permitsHeld", 1, "waiters", 1, "inboxSubscribed", true));
            waiting.cancel(true);
            held.release();
        });
    }

    /**
     * A cap of 3 over keys of 2, full, with a key waiting: the cap's entry, by its base name, shows
     * the figures of all keys together and this JVM's permits and waiters over its keys, beside the
     * keys' own entries; a full cap is no reason for DOWN.
     */
    @Test
    void aCapShowsItsFiguresOfAllKeysBesideTheKeys() {
        starter(shared)
                .withPropertyValues("distributed-semaphore.semaphores.health-capped.permits=2",
                        "distributed-semaphore.semaphores.health-capped.total-permits=3")
                .run(context -> {
                    SemaphoresHealthIndicator health = context.getBean(SemaphoresHealthIndicator.class);
                    SemaphoreCap cap = context.getBean(SemaphoreRegistry.class).cap("health-capped");
                    List<Permit> held = new ArrayList<>(List.of(cap.semaphore("acme").tryAcquire().orElseThrow(),
                            cap.semaphore("acme").tryAcquire().orElseThrow(),
                            cap.semaphore("globex").tryAcquire().orElseThrow()));
                    CompletableFuture<Permit> waiting = cap.semaphore("initech").acquireAsync(1, Duration.ofSeconds(30));

                    await().atMost(Duration.ofSeconds(10)).until(() -> Map.of("totalLimit", 3, "totalUsed", 3,
                            "totalWaiters", 1, "permitsHeld", 3, "waiters", 1)
                            .equals(details(health).get("health-capped")));
                    assertThat(status(health)).isEqualTo("UP");
                    assertThat(details(health)).containsEntry("health-capped:acme",
                            Map.of("permitsHeld", 2, "waiters", 0, "inboxSubscribed", true));

                    held.remove(2).release();
                    held.add(waiting.get(10, TimeUnit.SECONDS));
                    await().atMost(Duration.ofSeconds(10)).until(() -> Map.of("totalLimit", 3, "totalUsed", 3,
                            "totalWaiters", 0, "permitsHeld", 3, "waiters", 0)
                            .equals(details(health).get("health-capped")));
                    held.forEach(Permit::release);
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
        starter(server)
                .withPropertyValues("distributed-semaphore.semaphores.paused.lease-time=18s")
                .run(context -> {
                    SemaphoresHealthIndicator health = context.getBean(SemaphoresHealthIndicator.class);
                    Permit permit = context.getBean(SemaphoreRegistry.class).semaphore("paused").tryAcquire()
                            .orElseThrow();
                    server.pause(Duration.ofSeconds(15));
                    assertThat(status(health)).isEqualTo("UP");

                    await().atMost(Duration.ofSeconds(14)).until(() -> status(health).equals("DOWN"));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> paused = (Map<String, Object>) details(health).get("paused");
                    assertThat(paused).containsEntry("permitsHeld", 1).containsEntry("leasesAtRisk", true)
                            .containsKey("renewalFailingSince");

                    await().atMost(Duration.ofSeconds(10)).until(() -> status(health).equals("UP"));
                    assertThat(permit.isHeld()).isTrue();
                    assertThat(details(health).get("paused"))
                            .isEqualTo(Map.of("permitsHeld", 1, "waiters", 0, "inboxSubscribed", true));
                    permit.release();
                });
    }

    /**
     * A semaphore in degraded mode, its state as the engine sets it during an outage (set here by the
     * test, no outage needed): DEGRADED with its figures, though the renewals of what Redis granted
     * before have failed for longer than a third of the lease.
     */
    @Test
    void degradedWhileASemaphoreDecidesWithoutRedisThoughItsRenewalsFail() {
        Instant since = Instant.now().minus(Duration.ofMinutes(1));
        SemaphoresHealthIndicator health = new SemaphoresHealthIndicator(new LocalStates()
                .put(LocalStates.degraded("outage", WhenUnavailable.LOCAL, 2, 1, 1, since, Duration.ofSeconds(30)))
                .put(LocalStates.throughRedis("calm", 0, null, null)));
        assertThat(status(health)).isEqualTo("DEGRADED");
        assertThat(details(health).get("outage")).asInstanceOf(InstanceOfAssertFactories.MAP)
                .containsEntry("degraded", true).containsEntry("whenUnavailable", "local")
                .containsEntry("degradedSince", since.toString()).containsEntry("localShare", 2)
                .containsEntry("localPermitsHeld", 1).containsEntry("permitsHeld", 1);
    }

    /**
     * What Boot's health endpoint makes of DEGRADED by default on this line: HTTP 200, and beside UP
     * contributors an overall UP (Boot's default status order does not list DEGRADED, and its
     * aggregator leaves a status it does not list out), never DOWN: a load balancer keeps the
     * instance. With DEGRADED added to management.endpoint.health.status.order, as the docs say, the
     * overall status shows it, still with 200.
     */
    @Test
    void degradedIsServedWith200AndNeverMakesTheApplicationDown() {
        assertThat(BootLine.healthHttpStatus("DEGRADED")).isEqualTo(200);
        assertThat(BootLine.aggregateHealth(List.of(), "UP", "DEGRADED")).as("Boot's default order").isEqualTo("UP");
        assertThat(BootLine.aggregateHealth(List.of(), "DEGRADED")).as("alone: unknown to Boot's default order")
                .isEqualTo("UNKNOWN");
        assertThat(BootLine.healthHttpStatus("UNKNOWN")).isEqualTo(200);
        assertThat(BootLine.aggregateHealth(List.of(), "DOWN", "DEGRADED")).isEqualTo("DOWN");
        List<String> documentedOrder = List.of("DOWN", "OUT_OF_SERVICE", "DEGRADED", "UP", "UNKNOWN");
        assertThat(BootLine.aggregateHealth(documentedOrder, "UP", "DEGRADED")).isEqualTo("DEGRADED");
        assertThat(BootLine.aggregateHealth(documentedOrder, "DOWN", "DEGRADED")).isEqualTo("DOWN");
    }

    @Test
    void offByProperty() {
        starter(shared).withPropertyValues("management.health.semaphores.enabled=false")
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(SemaphoresHealthIndicator.class)
                        .hasSingleBean(SemaphoreRegistry.class));
    }
}
