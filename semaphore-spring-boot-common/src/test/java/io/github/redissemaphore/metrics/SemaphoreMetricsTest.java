package io.github.redissemaphore.metrics;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.WhenUnavailable;
import io.github.redissemaphore.core.internal.Engines;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.LocalStates;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

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
                .withConfiguration(AutoConfigurations.of(BootLine.METRICS_AUTO_CONFIGURATION))
                .withBean(SimpleMeterRegistry.class)
                .withBean(MeteredService.class)
                .withPropertyValues("distributed-semaphore.semaphores.metered.permits=2",
                        // renewed every 333 ms: renewals show up quickly, and a loaded machine's stall
                        // of a few hundred ms does not lose the lease
                        "distributed-semaphore.semaphores.metered.lease-time=1s");
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
                            "semaphore.permits.limit", "semaphore.waiters", "semaphore.lease.renewals",
                            "semaphore.lease.lost", "semaphore.release.deferred", "semaphore.rejections",
                            "semaphore.admissions.without.redis", "semaphore.degraded", "semaphore.rate.delayed");
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
            await().until(() -> meters.find("semaphore.acquire").tags("name", "metered", "outcome", "cancelled")
                    .timer() != null);

            // an operator ends the lease: the holder finds it lost at its next renewal
            semaphore.forceRelease(one.id());
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
    void countsRejectionsByReasonEachFromZero() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisSemaphore semaphore = context.getBean(SemaphoreRegistry.class)
                    .semaphore("bounded", SemaphoreSettings.DEFAULTS.withMaxWaiters(1));
            Permit held = semaphore.tryAcquire().orElseThrow();
            assertThat(rejections(meters, "queue-full")).isZero();
            assertThat(rejections(meters, "predicted-wait-too-long")).isZero();
            assertThat(rejections(meters, "local-share-in-use")).isZero();
            CompletableFuture<Permit> waiting = semaphore.acquireAsync(1, Duration.ofMillis(300));
            await().until(() -> meters.get("semaphore.waiters").tag("name", "bounded").gauge().value() == 1);
            assertThat(semaphore.acquireAsync(1, Duration.ofSeconds(10))).failsWithin(Duration.ofSeconds(5));
            assertThat(rejections(meters, "queue-full")).isEqualTo(1);
            assertThat(waiting).failsWithin(Duration.ofSeconds(5));
            await().until(() -> rejections(meters, "wait-timed-out") == 1);
            assertThat(rejections(meters, "predicted-wait-too-long")).isZero();
            held.release();
        });
    }

    /**
     * The degraded mode's meters, from the listener's events and the semaphore's local state as the
     * engine sets it during an outage (set here by the test: no outage needed): admissions without
     * Redis by mode, each from 0, the gauge 1 while degraded, and refusals decided locally among the
     * rejections.
     */
    @Test
    void countsAdmissionsWithoutRedisByModeAndShowsWhileTheSemaphoreIsDegraded() {
        LocalStates registry = new LocalStates().put(LocalStates.throughRedis("outage", 0, null, null));
        SemaphoreMetrics metrics = new SemaphoreMetrics(() -> registry);
        MeterRegistry meters = new SimpleMeterRegistry();
        metrics.bindTo(meters);
        metrics.usageReported("outage", 2, 0, 0);
        assertThat(admissions(meters, "local")).isZero();
        assertThat(admissions(meters, "allow")).isZero();
        assertThat(meters.find(SemaphoreMetrics.ADMISSIONS_WITHOUT_REDIS).tag("mode", "reject").counter())
                .as("reject admits nothing").isNull();
        assertThat(meters.get("semaphore.degraded").tag("name", "outage").gauge().value()).isZero();

        registry.put(LocalStates.degraded("outage", WhenUnavailable.LOCAL, 1, 0, 1, Instant.now(), Duration.ofSeconds(30)));
        metrics.degradedModeChanged("outage", true);
        metrics.admittedWithoutRedis("outage", 1, WhenUnavailable.LOCAL);
        metrics.admittedWithoutRedis("outage", 2, WhenUnavailable.LOCAL);
        metrics.admittedWithoutRedis("outage", 1, WhenUnavailable.ALLOW);
        metrics.rejected("outage", 1, SemaphoreRejectedException.Reason.LOCAL_SHARE_IN_USE);
        assertThat(meters.get("semaphore.degraded").tag("name", "outage").gauge().value()).isEqualTo(1);
        assertThat(admissions(meters, "local")).as("calls, not permits").isEqualTo(2);
        assertThat(admissions(meters, "allow")).isEqualTo(1);
        assertThat(meters.get("semaphore.rejections").tags("name", "outage", "reason", "local-share-in-use").counter()
                .count()).isEqualTo(1);

        registry.put(LocalStates.throughRedis("outage", 1, null, Duration.ofSeconds(30)));
        metrics.degradedModeChanged("outage", false);
        assertThat(meters.get("semaphore.degraded").tag("name", "outage").gauge().value()).as("reconciled").isZero();
        registry.close();
        assertThat(meters.get("semaphore.degraded").tag("name", "outage").gauge().value()).as("forgotten").isZero();
    }

    private static double admissions(MeterRegistry meters, String mode) {
        return meters.get(SemaphoreMetrics.ADMISSIONS_WITHOUT_REDIS).tags("name", "outage", "mode", mode).counter()
                .count();
    }

    @Test
    void countsRefusalsForTheRate() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            RedisSemaphore semaphore = context.getBean(SemaphoreRegistry.class).semaphore("rated",
                    SemaphoreSettings.DEFAULTS.withPermits(2).withRateLimit(1, Duration.ofMinutes(1)));
            semaphore.tryAcquire().orElseThrow().release();
            assertThat(meters.get("semaphore.rejections").tags("name", "rated", "reason", "rate-limited").counter()
                    .count()).isZero();
            assertThat(semaphore.tryAcquire()).as("the window is full for a minute").isEmpty();
            assertThat(meters.get("semaphore.rejections").tags("name", "rated", "reason", "rate-limited").counter()
                    .count()).isEqualTo(1);
        });
    }

    /**
     * A caller that waits while the window is full (a permit free, no slot) is counted once as
     * delayed by the rate; one that waits for a permit is not, nor one served at once.
     */
    @Test
    void countsGrantsDelayedByTheRate() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            RedisSemaphore rated = registry.semaphore("delayed",
                    SemaphoreSettings.DEFAULTS.withPermits(2).withRateLimit(1, Duration.ofMinutes(1)));
            Permit first = rated.tryAcquire().orElseThrow();
            assertThat(delayed(meters, "delayed")).as("served at once").isZero();
            CompletableFuture<Permit> second = rated.acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> delayed(meters, "delayed") == 1);
            assertThat(second).as("the window stays full for a minute").isNotDone();
            second.cancel(true);
            first.release();

            // Waiting for a permit, not for the rate: not counted.
            RedisSemaphore plain = registry.semaphore("permits-only", SemaphoreSettings.DEFAULTS);
            Permit held = plain.tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiting = plain.acquireAsync(1, Duration.ofSeconds(30));
            await().until(() -> meters.get("semaphore.waiters").tag("name", "permits-only").gauge().value() == 1);
            held.release();
            assertThat(waiting).succeedsWithin(Duration.ofSeconds(10)).satisfies(Permit::release);
            assertThat(delayed(meters, "permits-only")).isZero();
            assertThat(delayed(meters, "delayed")).isEqualTo(1);
        });
    }

    private static double delayed(MeterRegistry meters, String name) {
        return meters.get(SemaphoreMetrics.RATE_DELAYED).tag("name", name).counter().count();
    }

    private static double rejections(MeterRegistry meters, String reason) {
        return meters.get("semaphore.rejections").tags("name", "bounded", "reason", reason).counter().count();
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

    @Test
    void aPartialReleaseStopsTimingOnlyThePermitsGivenBack() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            Permit both = context.getBean(SemaphoreRegistry.class).semaphore("metered").tryAcquire(2, Duration.ZERO)
                    .orElseThrow();
            LongTaskTimer active = meters.get("semaphore.active").tag("name", "metered").longTaskTimer();
            await().until(() -> active.max(TimeUnit.MILLISECONDS) >= 50);
            double heldBefore = active.max(TimeUnit.MILLISECONDS);

            both.release(1);

            assertThat(active.activeTasks()).isEqualTo(1);
            // the permit kept is timed from its grant on, not afresh from the partial release
            assertThat(active.max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(heldBefore);
            both.release();
            assertThat(active.activeTasks()).isZero();
        });
    }

    @Test
    void everyMeterExistsFromTheFirstUseWithItsCountersAtZero() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            context.getBean(SemaphoreRegistry.class).semaphore("fresh").tryAcquire().orElseThrow().release();

            assertThat(meters.get("semaphore.lease.lost").tag("name", "fresh").counter().count()).isZero();
            assertThat(meters.get("semaphore.lease.renewals").tag("name", "fresh").counter().count()).isZero();
            assertThat(meters.get("semaphore.active").tag("name", "fresh").longTaskTimer().activeTasks()).isZero();
            assertThat(meters.get("semaphore.permits.limit").tag("name", "fresh").gauge().value()).isEqualTo(1);
            assertThat(meters.get("semaphore.permits.available").tag("name", "fresh").gauge().value()).isEqualTo(1);
            assertThat(meters.get("semaphore.waiters").tag("name", "fresh").gauge().value()).isZero();
        });
    }

    @Test
    void theMetersOfAForgottenKeyedSemaphoreGoWithIt() {
        runner.run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            registry.semaphore("tenants", "acme", registry.settingsOf("tenants")).tryAcquire().orElseThrow().release();
            Permit busy = registry.semaphore("tenants", "globex", registry.settingsOf("tenants")).tryAcquire()
                    .orElseThrow();
            // 16 (9, the 5 reasons of semaphore.rejections and the 2 modes of semaphore.admissions.without.redis):
            // the semaphore.acquire timer is the family's, tagged with the base name (made from the observation,
            // as everywhere), and is not among a key's meters
            assertThat(namesTagged(meters, "tenants:acme")).hasSize(16);
            assertThat(meters.get("semaphore.acquire").tags("name", "tenants", "outcome", "acquired").timer().count())
                    .isEqualTo(2);

            Engines.evictIdleKeyed(registry);

            assertThat(namesTagged(meters, "tenants:acme")).isEmpty();
            assertThat(namesTagged(meters, "tenants:globex")).as("held: not forgotten").hasSize(16);
            // used again: its meters are back, counters from 0
            registry.semaphore("tenants", "acme", registry.settingsOf("tenants")).tryAcquire().orElseThrow().release();
            assertThat(namesTagged(meters, "tenants:acme")).hasSize(16);
            busy.release();
        });
    }

    /**
     * A cap of 3 over keys of 2: its gauges count all keys together, tagged with the base name
     * alone, and follow its runtime limit; the keys keep their own meters under their full names.
     */
    @Test
    void theCapsGaugesCountAllItsKeysTaggedWithTheBaseNameAlone() {
        runner.withPropertyValues("distributed-semaphore.semaphores.capped.permits=2",
                "distributed-semaphore.semaphores.capped.total-permits=3").run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            SemaphoreCap cap = context.getBean(SemaphoreRegistry.class).cap("capped");
            Permit acme = cap.semaphore("acme").tryAcquire().orElseThrow();
            Permit acmeAgain = cap.semaphore("acme").tryAcquire().orElseThrow();
            Permit globex = cap.semaphore("globex").tryAcquire().orElseThrow();
            CompletableFuture<Permit> initech = cap.semaphore("initech").acquireAsync(1, Duration.ofSeconds(20));

            await().atMost(Duration.ofSeconds(10)).until(() -> capGauge(meters, "semaphore.total.waiters") == 1);
            assertThat(capGauge(meters, "semaphore.total.permits.limit")).isEqualTo(3);
            assertThat(capGauge(meters, "semaphore.total.permits.available")).isZero();
            assertThat(meters.get("semaphore.permits.limit").tag("name", "capped:acme").gauge().value())
                    .as("a key's own limit").isEqualTo(2);
            for (String name : List.of("semaphore.total.permits.limit", "semaphore.total.permits.available",
                    "semaphore.total.waiters")) {
                assertThat(meters.find(name).meters()).as(name).singleElement()
                        .satisfies(meter -> assertThat(meter.getId().getTags()).containsExactly(Tag.of("name", "capped")));
            }
            // no meter of the library is tagged with anything a key could multiply but its name
            assertThat(meters.getMeters()).filteredOn(meter -> meter.getId().getName().startsWith("semaphore."))
                    .allSatisfy(meter -> assertThat(meter.getId().getTags()).extracting(Tag::getKey)
                            .isSubsetOf("name", "outcome", "error", "reason", "mode"));

            globex.release();
            Permit served = initech.get(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> capGauge(meters, "semaphore.total.waiters") == 0);
            cap.overrideLimit(5);
            assertThat(capGauge(meters, "semaphore.total.permits.limit")).isEqualTo(5);
            assertThat(capGauge(meters, "semaphore.total.permits.available")).isEqualTo(2);
            cap.clearLimitOverride();
            assertThat(capGauge(meters, "semaphore.total.permits.limit")).isEqualTo(3);
            List.of(acme, acmeAgain, served).forEach(Permit::release);
        });
    }

    @Test
    void switchedOffNoSemaphoreMeterExists() {
        runner.withConfiguration(AutoConfigurations.of(BootLine.OBSERVATION_AUTO_CONFIGURATION))
                .withPropertyValues("distributed-semaphore.metrics.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(SemaphoreMetrics.class);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    MeteredService service = context.getBean(MeteredService.class);
                    service.call(null);
                    context.getBean(SemaphoreRegistry.class).semaphore("tenants:acme").tryAcquire().orElseThrow()
                            .release();

                    assertThat(meters.getMeters()).noneMatch(meter -> meter.getId().getName().startsWith("semaphore"));
                });
    }

    /**
     * The {@code semaphore.acquire} timer is made from the observation alone, with one set of tags
     * ({@code name}, {@code outcome}, {@code error}): with the application's observation registry, and
     * without one (the starter's metrics then give the semaphore registry one with a meter handler);
     * one per semaphore and outcome, counting every acquisition, never two. Where the observation is
     * switched off, or the application's own semaphore registry is built without observations, there
     * is none: nothing else makes it.
     */
    @Test
    void theAcquireTimerExistsExactlyOnceWhetherTheAcquisitionsAreObservedOrNot() {
        ApplicationContextRunner observed = runner.withConfiguration(
                AutoConfigurations.of(BootLine.OBSERVATION_AUTO_CONFIGURATION));
        Map<String, ApplicationContextRunner> configurations = new LinkedHashMap<>();
        configurations.put("no ObservationRegistry", runner);
        configurations.put("observed", observed);
        configurations.put("observations switched off",
                observed.withPropertyValues("management.observations.enable.semaphore=false"));
        configurations.put("a registry of the application's own", observed.withUserConfiguration(OwnRegistry.class));
        configurations.forEach((configuration, contexts) -> contexts.run(context -> {
            assertThat(context).hasNotFailed();
            MeteredService service = context.getBean(MeteredService.class);
            for (int i = 0; i < 3; i++) {
                service.call(null);
            }
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            if (configuration.equals("observations switched off")
                    || configuration.equals("a registry of the application's own")) {
                assertThat(meters.find("semaphore.acquire").timers()).as(configuration).isEmpty();
                return;
            }
            assertThat(meters.find("semaphore.acquire").timers()).as(configuration).singleElement()
                    .satisfies(timer -> {
                        assertThat(timer.getId().getTag("name")).isEqualTo("metered");
                        assertThat(timer.getId().getTag("outcome")).isEqualTo("acquired");
                        assertThat(timer.count()).isEqualTo(3);
                        assertThat(timer.getId().getTag("error")).as("made by the observation's meter handler")
                                .isEqualTo("none");
                    });
        }));
    }

    @Test
    void aSwitchThatIsNeitherTrueNorFalseStopsTheStartUp() {
        runner.withConfiguration(AutoConfigurations.of(BootLine.OBSERVATION_AUTO_CONFIGURATION))
                .withPropertyValues("distributed-semaphore.metrics.enabled=flase")
                .run(context -> {
                    assertThat(context).hasFailed();
                    BindException failure = findCause(context.getStartupFailure(), BindException.class);
                    assertThat(failure).as("the binding failure the failure analyzer reports").isNotNull();
                    assertThat(failure.getName()).hasToString("distributed-semaphore.metrics.enabled");
                    assertThat(failure.getProperty().getValue()).isEqualTo("flase");
                });
    }

    @Test
    void theSwitchReadsTrueAndFalseAsTheBinderDoes() {
        runner.withPropertyValues("distributed-semaphore.metrics.enabled=off").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(SemaphoreMetrics.class).hasBean("semaphoreMetersOff");
            assertThat(context.getBean(DistributedSemaphoreProperties.class).metrics().enabled()).isFalse();
        });
        runner.withPropertyValues("distributed-semaphore.metrics.enabled=TRUE").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(SemaphoreMetrics.class).doesNotHaveBean("semaphoreMetersOff"));
    }

    private static <T extends Throwable> T findCause(Throwable failure, Class<T> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return type.cast(cause);
            }
        }
        return null;
    }

    /** @return the names of the meters tagged with this semaphore name (acquired and released once: 7, the acquire timer is the base name's) */
    private static List<String> namesTagged(MeterRegistry meters, String semaphore) {
        return meters.getMeters().stream().filter(meter -> semaphore.equals(meter.getId().getTag("name")))
                .map(meter -> meter.getId().getName()).toList();
    }

    private static double capGauge(MeterRegistry meters, String name) {
        return meters.get(name).tag("name", "capped").gauge().value();
    }

    private static double gauge(MeterRegistry meters, String name) {
        return meters.get(name).tag("name", "metered").gauge().value();
    }

    /** A semaphore registry the application builds itself, with the starter's metrics but no observations. */
    @Configuration(proxyBeanMethods = false)
    static class OwnRegistry {

        @Bean
        SemaphoreRegistry ownSemaphoreRegistry(RedisConnectionFactory connectionFactory, SemaphoreMetrics metrics,
                                               Environment environment) {
            return SemaphoreRegistry.builder(connectionFactory)
                    .keyPrefix(environment.getRequiredProperty("distributed-semaphore.key-prefix"))
                    .configure("metered", SemaphoreSettings.DEFAULTS.withPermits(2))
                    .listener(metrics)
                    .build();
        }
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
