package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.actuate.LimitRequestCheck;
import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreListener;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.metrics.SemaphoreMetrics;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Which beans the auto-configuration creates, when it backs off, and what it builds them from. */
@RedisTest
class DistributedSemaphoreAutoConfigurationTest {

    private final ApplicationContextRunner runner;

    DistributedSemaphoreAutoConfigurationTest(RedisServer server) {
        this.runner = StarterContexts.on(server)
                .withBean(SimpleMeterRegistry.class)
                .withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=semaphores");
    }

    @Test
    void createsEveryBeanOnTheApplicationsRedis() {
        runner.run(context -> {
            assertThat(context).hasNotFailed()
                    .hasSingleBean(SemaphoreRegistry.class)
                    .hasSingleBean(DistributedSemaphoreAspect.class)
                    .hasSingleBean(SemaphoreMetrics.class)
                    .hasSingleBean(SemaphoresEndpoint.class)
                    .hasSingleBean(LimitRequestCheck.class);
            // the registry loads its scripts itself: they are no beans an application could replace
            assertThat(context.getBeansOfType(RedisScript.class)).isEmpty();
            RedisSemaphore semaphore = context.getBean(SemaphoreRegistry.class).semaphore("works");
            try (Permit permit = semaphore.tryAcquire().orElseThrow()) {
                assertThat(semaphore.state().used()).isEqualTo(1);
            }
            assertThat(semaphore.state().used()).isZero();
        });
    }

    @Test
    void configuresTheRegistryFromTheProperties() {
        runner.withPropertyValues("distributed-semaphore.defaults.permits=4",
                        "distributed-semaphore.defaults.lease-time=10s",
                        "distributed-semaphore.defaults.fair=false",
                        "distributed-semaphore.defaults.replicas=2",
                        "distributed-semaphore.semaphores.reports.permits=3",
                        "distributed-semaphore.semaphores.reports.wait-time=5s",
                        "distributed-semaphore.semaphores.reports.replication-timeout=250ms")
                .run(context -> {
                    SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
                    assertThat(registry.settingsOf("anything")).isEqualTo(new SemaphoreSettings(4,
                            Duration.ofSeconds(10), Duration.ZERO, false, true, 2, Duration.ofMillis(100)));
                    // left-out values come from the defaults
                    assertThat(registry.settingsOf("reports")).isEqualTo(new SemaphoreSettings(3,
                            Duration.ofSeconds(10), Duration.ofSeconds(5), false, true, 2, Duration.ofMillis(250)));
                    assertThat(registry.settingsOf("reports").replicas()).isEqualTo(2);
                    assertThat(registry.settingsOf("reports").replicationTimeout()).isEqualTo(Duration.ofMillis(250));
                    // reading the state waits for no replica (a grant would: there is none here)
                    assertThat(registry.semaphore("reports").state().limit()).isEqualTo(3);
                });
    }

    @Test
    void theKeyPrefixNamesTheRedisKeys(RedisServer server) {
        String shop = server.keyPrefix() + ":shop";
        runner.withPropertyValues("distributed-semaphore.key-prefix=" + shop).run(context -> {
            try (Permit permit = context.getBean(SemaphoreRegistry.class).semaphore("orders").tryAcquire()
                    .orElseThrow()) {
                assertThat(server.keys(shop + ":{orders}:*")).isNotEmpty();
                // not under the prefix the runner set before
                assertThat(server.keys(server.keyPrefix() + ":{*")).isEmpty();
            }
        });
    }

    @Test
    void anApplicationRegistryReplacesOursAndTheAspectUsesIt(RedisServer server) {
        runner.withBean("myRegistry", SemaphoreRegistry.class,
                        () -> SemaphoreRegistry.builder(server.connectionFactory())
                                .keyPrefix(server.keyPrefix() + ":mine").build())
                .run(context -> {
                    assertThat(context).hasSingleBean(SemaphoreRegistry.class).hasBean("myRegistry")
                            .doesNotHaveBean("semaphoreRegistry")
                            .hasSingleBean(DistributedSemaphoreAspect.class);
                });
    }

    @Test
    void anApplicationAspectMetricsAndEndpointReplaceOurs() {
        runner.withBean("myAspect", DistributedSemaphoreAspect.class,
                        () -> new DistributedSemaphoreAspect((SemaphoreRegistry) null, new StandardEnvironment(),
                                Runnable::run, 0))
                .withBean("myMetrics", SemaphoreMetrics.class, () -> new SemaphoreMetrics(() -> null))
                .withBean("myEndpoint", SemaphoresEndpoint.class, () -> new SemaphoresEndpoint(null, List.of()))
                .run(context -> assertThat(context).hasNotFailed()
                        .hasSingleBean(DistributedSemaphoreAspect.class).hasBean("myAspect")
                        .hasSingleBean(SemaphoreMetrics.class).hasBean("myMetrics")
                        .hasSingleBean(SemaphoresEndpoint.class).hasBean("myEndpoint"));
    }

    @Test
    void nothingWhenDisabled() {
        runner.withPropertyValues("distributed-semaphore.enabled=false").run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(SemaphoreRegistry.class)
                .doesNotHaveBean(DistributedSemaphoreAspect.class)
                .doesNotHaveBean(SemaphoreMetrics.class)
                .doesNotHaveBean(SemaphoresEndpoint.class));
    }

    @Test
    void nothingWithoutSpringDataRedisOnTheClassPath() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis")).run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(SemaphoreRegistry.class)
                .doesNotHaveBean(DistributedSemaphoreAspect.class)
                .doesNotHaveBean(SemaphoreMetrics.class)
                .doesNotHaveBean(SemaphoresEndpoint.class));
    }

    @Test
    void nothingWithoutAConnectionFactory() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DistributedSemaphoreAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SemaphoreRegistry.class));
    }

    @Test
    void nothingWhenTheConnectionFactoryIsAmbiguous(RedisServer server) {
        runner.withBean("one", RedisConnectionFactory.class, server::connectionFactory)
                .withBean("two", RedisConnectionFactory.class, server::connectionFactory)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SemaphoreRegistry.class));
    }

    @Test
    void noMetricsWithoutMicrometerNoEndpointWithoutActuator() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> assertThat(context)
                .hasNotFailed().hasSingleBean(SemaphoreRegistry.class).doesNotHaveBean(SemaphoreMetrics.class));
        runner.withClassLoader(new FilteredClassLoader(Endpoint.class)).run(context -> assertThat(context)
                .hasNotFailed().hasSingleBean(SemaphoreRegistry.class).doesNotHaveBean(SemaphoresEndpoint.class));
    }

    @Test
    void noEndpointWhenItsAccessIsNone() {
        runner.withPropertyValues("management.endpoint.semaphores.access=NONE").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(SemaphoresEndpoint.class));
    }

    @Test
    void everySemaphoreListenerBeanHearsTheRegistry() {
        AtomicInteger acquisitions = new AtomicInteger();
        SemaphoreListener listener = new SemaphoreListener() {
            @Override
            public void acquisitionEnded(String semaphore, int permits, Outcome outcome, Duration elapsed) {
                acquisitions.incrementAndGet();
            }
        };
        runner.withBean(SemaphoreListener.class, () -> listener).run(context -> {
            context.getBean(SemaphoreRegistry.class).semaphore("heard").tryAcquire().orElseThrow().release();
            assertThat(acquisitions).hasValue(1);
        });
    }

    @Test
    void runsItsTicksOnTheSchedulerNamedForIt() {
        AtomicInteger scheduled = new AtomicInteger();
        SimpleAsyncTaskScheduler scheduler = new SimpleAsyncTaskScheduler() {
            @Override
            public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
                scheduled.incrementAndGet();
                return super.schedule(task, startTime);
            }
        };
        runner.withBean(DistributedSemaphoreAutoConfiguration.TASK_SCHEDULER_BEAN_NAME, TaskScheduler.class,
                        () -> scheduler)
                .run(context -> {
                    endAWait(context.getBean(SemaphoreRegistry.class));
                    // the wait's deadline and the tick were timed by the scheduler named for the registry
                    assertThat(scheduled).hasPositiveValue();
                });
    }

    @Test
    void doesNotBorrowTheSchedulerOfEnableScheduling() {
        runner.withUserConfiguration(SchedulingApplication.class)
                .withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
                .run(context -> {
                    ThreadPoolTaskScheduler application = context.getBean("taskScheduler", ThreadPoolTaskScheduler.class);
                    long before = application.getScheduledThreadPoolExecutor().getTaskCount();
                    endAWait(context.getBean(SemaphoreRegistry.class));
                    // the registry timed it on its own scheduler, which keeps running until the registry stops
                    assertThat(application.getScheduledThreadPoolExecutor().getTaskCount()).isEqualTo(before);
                });
    }

    /** Lets a wait run out: its deadline is timed by the registry's scheduler. */
    private static void endAWait(SemaphoreRegistry registry) throws InterruptedException {
        RedisSemaphore semaphore = registry.semaphore("scheduled");
        try (Permit held = semaphore.tryAcquire().orElseThrow()) {
            assertThat(semaphore.tryAcquire(Duration.ofMillis(100))).isEmpty();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class SchedulingApplication {
    }
}
