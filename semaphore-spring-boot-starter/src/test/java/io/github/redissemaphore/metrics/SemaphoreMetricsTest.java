package io.github.redissemaphore.metrics;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.internal.DefaultRedisSemaphore;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The meters, their tags and their figures, after real calls on a real Redis. */
@RedisTest
class SemaphoreMetricsTest {

    private final ApplicationContextRunner runner;
    private final ExecutorService background = Executors.newCachedThreadPool();

    SemaphoreMetricsTest(RedisServer server) {
        this.runner = StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class)
                .withBean(MeteredService.class)
                .withPropertyValues("distributed-semaphore.semaphores.metered.permits=2",
                        // renewed every 100 ms: renewals show up quickly
                        "distributed-semaphore.semaphores.metered.lease-time=300ms");
    }

    @AfterEach
    void stopBackground() {
        background.shutdownNow();
    }

    @Test
    void publishesAcquisitionsHoldersUsageAndRenewals() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            MeteredService service = context.getBean(MeteredService.class);
            service.call(null);
            service.call(null);
            service.call(null);

            Gate gate = new Gate();
            Future<String> first = background.submit(() -> service.call(gate));
            Future<String> second = background.submit(() -> service.call(gate));
            gate.awaitEntered(2);
            assertThatThrownBy(() -> service.call(null)).isInstanceOf(SemaphoreRejectedException.class);

            assertThat(meters.get("semaphore.acquire").tags("name", "metered", "outcome", "acquired").timer().count())
                    .isEqualTo(5);
            assertThat(meters.get("semaphore.acquire").tags("name", "metered", "outcome", "rejected").timer().count())
                    .isEqualTo(1);
            assertThat(meters.get("semaphore.active").tag("name", "metered").longTaskTimer().activeTasks())
                    .isEqualTo(2);
            assertThat(gauge(meters, "semaphore.permits.limit")).isEqualTo(2);
            assertThat(gauge(meters, "semaphore.permits.available")).isZero();
            assertThat(gauge(meters, "semaphore.waiters")).isZero();
            await().until(() -> meters.get("semaphore.lease.renewals").tag("name", "metered").counter().count() >= 2);

            gate.open();
            first.get(10, TimeUnit.SECONDS);
            second.get(10, TimeUnit.SECONDS);
            assertThat(meters.get("semaphore.active").tag("name", "metered").longTaskTimer().activeTasks()).isZero();
            // Two releases at once may report their figures out of order; the next call's are current.
            service.call(null);
            assertThat(gauge(meters, "semaphore.permits.available")).isEqualTo(2);

            assertThat(meters.getMeters()).map(meter -> meter.getId().getName())
                    .filteredOn(name -> name.startsWith("semaphore."))
                    .containsOnly("semaphore.acquire", "semaphore.active", "semaphore.permits.available",
                            "semaphore.permits.limit", "semaphore.waiters", "semaphore.lease.renewals");
            assertThat(meters.getMeters()).filteredOn(meter -> meter.getId().getName().startsWith("semaphore."))
                    .allSatisfy(meter -> assertThat(meter.getId().getTag("name")).isEqualTo("metered"));
        });
    }

    @Test
    void countsLostLeasesErrorsAndWaiters() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisSemaphore semaphore = context.getBean(SemaphoreRegistry.class).semaphore("metered");
            Permit one = semaphore.tryAcquire().orElseThrow();
            Permit two = semaphore.tryAcquire().orElseThrow();

            CompletableFuture<Permit> waiting = semaphore.acquireAsync(1, Duration.ofSeconds(20));
            await().until(() -> gauge(meters, "semaphore.waiters") == 1);
            waiting.cancel(true);
            await().until(() -> meters.find("semaphore.acquire").tags("name", "metered", "outcome", "error")
                    .timer() != null);

            // an operator ends the lease: the holder finds it lost at its next renewal
            ((DefaultRedisSemaphore) semaphore).forceRelease(one.id());
            await().until(() -> meters.find("semaphore.lease.lost").tag("name", "metered").counter() != null
                    && meters.get("semaphore.lease.lost").tag("name", "metered").counter().count() == 1);
            assertThat(one.isHeld()).isFalse();
            assertThat(meters.get("semaphore.active").tag("name", "metered").longTaskTimer().activeTasks())
                    .isEqualTo(1);
            two.release();
            assertThat(meters.get("semaphore.active").tag("name", "metered").longTaskTimer().activeTasks()).isZero();
        });
    }

    @Test
    void aLeaseOfSeveralPermitsCountsEachAsActive() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            try (Permit both = context.getBean(SemaphoreRegistry.class).semaphore("metered")
                    .tryAcquire(2, Duration.ZERO).orElseThrow()) {
                assertThat(meters.get("semaphore.active").tag("name", "metered").longTaskTimer().activeTasks())
                        .isEqualTo(2);
            }
        });
    }

    private static double gauge(MeterRegistry meters, String name) {
        return meters.get(name).tag("name", "metered").gauge().value();
    }

    static class MeteredService {

        @DistributedSemaphore("metered")
        public String call(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }
    }
}
