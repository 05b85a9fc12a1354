package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.bulkhead.ThreadPoolBulkheadRegistry;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the Resilience4j drop-in takes the {@link BulkheadRegistry}, and when it leaves Resilience4j
 * exactly as it is without our starter.
 */
@RedisTest
class DistributedBulkheadAutoConfigurationTest {

    private final ApplicationContextRunner runner;

    DistributedBulkheadAutoConfigurationTest(RedisServer server) {
        this.runner = Resilience4jContexts.on(server)
                .withPropertyValues("resilience4j.bulkhead.instances.reports.max-concurrent-calls=3");
    }

    @Test
    void withoutTheSwitchTheRegistryIsResilience4jsOwn() {
        runner.run(context -> {
            BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
            assertThat(registry).isNotInstanceOf(FleetBulkheadRegistry.class);
            assertThat(registry.bulkhead("reports")).isNotInstanceOf(FleetBulkhead.class);
            assertThat(registry.bulkhead("reports").getBulkheadConfig().getMaxConcurrentCalls()).isEqualTo(3);
        });
        runner.withPropertyValues("distributed-semaphore.resilience4j.enabled=false")
                .run(context -> assertThat(context.getBean(BulkheadRegistry.class))
                        .isNotInstanceOf(FleetBulkheadRegistry.class));
    }

    @Test
    void withTheSwitchEverySemaphoreBulkheadIsBackedByTheSemaphoreOfItsName() {
        runner.withPropertyValues(Resilience4jContexts.ON,
                        "resilience4j.bulkhead.configs.default.max-wait-duration=2s",
                        "distributed-semaphore.semaphores.reports.lease-time=10s",
                        "distributed-semaphore.semaphores.reports.max-waiters=7")
                .run(context -> {
                    BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
                    assertThat(registry).isInstanceOf(FleetBulkheadRegistry.class);
                    FleetBulkhead reports = (FleetBulkhead) registry.bulkhead("reports");
                    assertThat(reports.semaphore().settings())
                            .satisfies(settings -> assertThat(settings.permits()).isEqualTo(3))
                            .satisfies(settings -> assertThat(settings.waitTime()).hasSeconds(2))
                            .satisfies(settings -> assertThat(settings.leaseTime()).hasSeconds(10))
                            .satisfies(settings -> assertThat(settings.maxWaiters()).isEqualTo(7));
                    // a bulkhead asked for later, as @Bulkhead(name = "#tenant", configuration = ...) asks
                    assertThat(registry.bulkhead("acme", "default")).isInstanceOf(FleetBulkhead.class);
                    // thread-pool bulkheads are Resilience4j's own
                    assertThat(context.getBean(ThreadPoolBulkheadRegistry.class).bulkhead("pool").getClass().getName())
                            .startsWith("io.github.resilience4j");
                });
    }

    @Test
    void anApplicationsOwnRegistryWins() {
        BulkheadRegistry own = BulkheadRegistry.ofDefaults();
        runner.withPropertyValues(Resilience4jContexts.ON).withBean(BulkheadRegistry.class, () -> own)
                .run(context -> assertThat(context.getBean(BulkheadRegistry.class)).isSameAs(own));
    }

    @Test
    void withTheSemaphoresSwitchedOffResilience4jIsLeftAlone() {
        runner.withPropertyValues(Resilience4jContexts.ON, "distributed-semaphore.enabled=false")
                .run(context -> assertThat(context.getBean(BulkheadRegistry.class))
                        .isNotInstanceOf(FleetBulkheadRegistry.class));
    }
}
