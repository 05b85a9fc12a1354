package io.github.redissemaphore.aspect;

import io.github.redissemaphore.actuate.SemaphoresHealth;
import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.metrics.SemaphoreMetrics;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * {@code when-unavailable: local} seen from an application, end to end on a Redis of the test's
 * own that is killed and started again: a guarded method goes on running out of the instance's
 * share, a call beyond it is refused with {@code local-share-in-use}, the health contributor says
 * DEGRADED, the meters count the admission and show the degraded semaphore, and once Redis is back
 * all of it returns to normal.
 */
@RedisTest
class DegradedModeApplicationTest {

    /** A guarded method that stays inside until told to return. */
    static class Reports {

        @DistributedSemaphore("reports")
        public String run(CountDownLatch inside, CountDownLatch leave) throws InterruptedException {
            inside.countDown();
            leave.await(30, TimeUnit.SECONDS);
            return "done";
        }
    }

    @Test
    void aGuardedMethodRunsOutOfTheShareWhileRedisIsDownAndOperatorsSeeIt(@Dedicated RedisServer server) {
        StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(BootLine.METRICS_AUTO_CONFIGURATION))
                .withBean(SimpleMeterRegistry.class)
                .withBean(Reports.class)
                .withPropertyValues("distributed-semaphore.redis-timeout=1s",
                        "distributed-semaphore.semaphores.reports.permits=2",
                        "distributed-semaphore.semaphores.reports.when-unavailable=local",
                        "distributed-semaphore.semaphores.reports.local-permits=1")
                .run(context -> {
                    Reports reports = context.getBean(Reports.class);
                    assertThat(reports.run(new CountDownLatch(1), new CountDownLatch(0))).isEqualTo("done");
                    server.kill();

                    CountDownLatch inside = new CountDownLatch(1);
                    CountDownLatch leave = new CountDownLatch(1);
                    CompletableFuture<String> holder = CompletableFuture.supplyAsync(() -> {
                        try {
                            return reports.run(inside, leave);
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    assertThat(inside.await(10, TimeUnit.SECONDS)).as("ran while Redis is down").isTrue();
                    Throwable refused = catchThrowable(() -> reports.run(new CountDownLatch(1), new CountDownLatch(0)));
                    assertThat(refused).isInstanceOfSatisfying(SemaphoreRejectedException.class, e -> assertThat(
                            e.reason()).isEqualTo(SemaphoreRejectedException.Reason.LOCAL_SHARE_IN_USE));
                    assertThat(health(context)).isEqualTo("DEGRADED");
                    assertThat(meters(context).get(SemaphoreMetrics.ADMISSIONS_WITHOUT_REDIS).tag("name", "reports")
                            .tag("mode", "local").counter().count()).isEqualTo(1);
                    assertThat(meters(context).get("semaphore.degraded").tag("name", "reports").gauge().value())
                            .isEqualTo(1);

                    leave.countDown();
                    assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");
                    server.start();
                    await().atMost(Duration.ofSeconds(15)).until(() -> health(context).equals("UP"));
                    assertThat(meters(context).get("semaphore.degraded").tag("name", "reports").gauge().value())
                            .isZero();
                    assertThat(reports.run(new CountDownLatch(1), new CountDownLatch(0))).isEqualTo("done");
                });
    }

    private static String health(ApplicationContext context) {
        return SemaphoresHealth.of(context.getBean(SemaphoreRegistry.class)).status();
    }

    private static MeterRegistry meters(ApplicationContext context) {
        return context.getBean(MeterRegistry.class);
    }
}
