package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What the registry decides on its own: settings by name, and the figures it reports. */
@RedisTest
class RegistryTest extends SemaphoreTestBase {

    RegistryTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }

    @Test
    void settingsComeFromTheNameThenTheNameBeforeTheKeyThenTheDefaults() {
        SemaphoreSettings exports = SemaphoreSettings.DEFAULTS.withPermits(1).withWaitTime(Duration.ofSeconds(1));
        SemaphoreSettings acme = SemaphoreSettings.DEFAULTS.withPermits(5);
        SemaphoreSettings defaults = SemaphoreSettings.DEFAULTS.withPermits(2);
        SemaphoreRegistry registry = newRegistry(builder -> builder.defaults(defaults)
                .configure("exports", exports).configure("exports:acme", acme));

        assertThat(registry.semaphore("exports:globex").settings()).isEqualTo(exports);
        assertThat(registry.semaphore("exports:acme").settings()).isEqualTo(acme);
        assertThat(registry.semaphore("exports").settings()).isEqualTo(exports);
        assertThat(registry.semaphore("reports").settings()).isEqualTo(defaults);
        assertThat(registry.semaphore(":odd").settings()).isEqualTo(defaults);
        assertThat(registry.semaphores()).extracting(RedisSemaphore::name)
                .containsExactlyInAnyOrder("exports:globex", "exports:acme", "exports", "reports", ":odd");
    }

    @Test
    void aLookupReadsTheNameOnceAndMakesNothingForAnUnknownOne() {
        SemaphoreSettings exports = SemaphoreSettings.DEFAULTS.withPermits(2).withTotalPermits(3);
        SemaphoreSettings reports = SemaphoreSettings.DEFAULTS.withPermits(4);
        SemaphoreRegistry registry = newRegistry(builder -> builder.configure("exports", exports)
                .configure("reports", reports));
        RedisSemaphore used = registry.semaphore("plain");

        assertThat(registry.lookup("exports")).isInstanceOfSatisfying(SemaphoreLookup.Capped.class,
                capped -> assertThat(capped.cap().name()).isEqualTo("exports"));
        assertThat(registry.lookup("exports:acme")).isInstanceOfSatisfying(SemaphoreLookup.Found.class,
                found -> assertThat(found.semaphore()).isSameAs(registry.cap("exports").semaphore("acme")));
        assertThat(registry.lookup("reports")).isInstanceOfSatisfying(SemaphoreLookup.Found.class,
                found -> assertThat(found.semaphore().settings()).isEqualTo(reports));
        assertThat(registry.lookup("plain")).isEqualTo(new SemaphoreLookup.Found(used));
        assertThat(registry.lookup("reports:acme")).isEqualTo(new SemaphoreLookup.Unknown("reports:acme"));
        assertThat(registry.lookup("never")).isEqualTo(new SemaphoreLookup.Unknown("never"));
        assertThat(registry.lookup("bad name")).isEqualTo(new SemaphoreLookup.Unknown("bad name"));
        assertThat(registry.semaphores()).extracting(RedisSemaphore::name)
                .containsExactlyInAnyOrder("plain", "reports", "exports:acme");
    }

    @Test
    void theLastReportedUsageIsTheNewestEvenWhenRepliesRace() throws Exception {
        AtomicReference<Integer> lastUsed = new AtomicReference<>();
        SemaphoreListener gauge = new SemaphoreListener() {
            @Override
            public void usageReported(String semaphore, int limit, int used, int waiters) {
                lastUsed.set(used);
            }
        };
        RedisSemaphore semaphore = newRegistry(builder -> builder.listener(gauge))
                .semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(4));

        Contention.run(List.of(semaphore), 8, 100, RedisSemaphore::tryAcquire);

        // The newest reply is the last release's: nothing held. An older figure arriving late is ignored.
        assertThat(lastUsed.get()).isZero();
    }

    @Test
    void idleKeyedSemaphoresAreForgottenAndAStaleReferenceStillWorks() {
        SemaphoreRegistry registry = newRegistry(builder -> builder.configure("tenants:vip",
                SemaphoreSettings.DEFAULTS.withPermits(2)));
        registry.semaphore("plain").tryAcquire().orElseThrow().release();
        registry.semaphore("tenants:vip").tryAcquire().orElseThrow().release();
        RedisSemaphore stale = registry.semaphore("tenants:0");
        for (int tenant = 0; tenant < 100; tenant++) {
            registry.semaphore("tenants:" + tenant).tryAcquire().orElseThrow().release();
        }
        Permit busy = registry.semaphore("tenants:busy").tryAcquire().orElseThrow();

        io.github.redissemaphore.core.internal.Engines.evictIdleKeyed(registry);

        // Plain and configured names stay, and so does a keyed one this JVM holds.
        assertThat(registry.semaphores()).extracting(RedisSemaphore::name)
                .containsExactlyInAnyOrder("plain", "tenants:vip", "tenants:busy");
        Permit viaStale = stale.tryAcquire().orElseThrow();
        assertThat(registry.semaphore("tenants:0")).isNotSameAs(stale);
        assertThat(registry.semaphore("tenants:0").tryAcquire()).isEmpty();

        // The permit taken through the stale reference is the live semaphore's: shutdown gives it back.
        registry.close();
        assertThat(viaStale.isHeld()).isFalse();
        assertThat(busy.isHeld()).isFalse();
        RedisSemaphore observer = newRegistry().semaphore("tenants:0");
        assertThat(observer.state().used()).isZero();
    }

    @Test
    void listenersHearWhichKeyedSemaphoresAreForgotten() {
        List<String> forgotten = new CopyOnWriteArrayList<>();
        SemaphoreRegistry registry = newRegistry(builder -> builder.listener(new SemaphoreListener() {
            @Override
            public void semaphoreForgotten(String semaphore) {
                forgotten.add(semaphore);
            }
        }));
        registry.semaphore("plain").tryAcquire().orElseThrow().release();
        registry.semaphore("api:v2").tryAcquire().orElseThrow().release();
        registry.semaphore("tenants:1").tryAcquire().orElseThrow().release();
        registry.semaphore("api:v2", "acme", SemaphoreSettings.DEFAULTS).tryAcquire().orElseThrow().release();
        Permit busy = registry.semaphore("tenants:busy").tryAcquire().orElseThrow();

        io.github.redissemaphore.core.internal.Engines.evictIdleKeyed(registry);

        // "api:v2" is keyed by the rule of names ("api" + "v2"): forgotten too, it costs nothing.
        assertThat(forgotten).containsExactlyInAnyOrder("tenants:1", "api:v2:acme", "api:v2");
        assertThat(registry.semaphores()).extracting(RedisSemaphore::name)
                .containsExactlyInAnyOrder("plain", "tenants:busy");
        busy.release();
    }

    @Test
    void theLocalStateCountsWhatThisJvmHoldsAndWaitsForWithoutAskingRedis() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3));
        assertThat(semaphore.localState()).isEqualTo(new LocalState(name, 0, 0, true, null, null));

        Permit two = semaphore.tryAcquire(2, Duration.ZERO).orElseThrow();
        // a lease of its own, shorter than the semaphore's: the shortest held
        Permit one = semaphore.tryAcquire(1, Duration.ZERO, Duration.ofSeconds(7)).orElseThrow();
        var waiting = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> semaphore.localState().waiters() == 1);
        assertThat(semaphore.localState().permitsHeld()).isEqualTo(3);
        assertThat(semaphore.localState().renewalFailingSince()).isNull();
        assertThat(semaphore.localState().shortestLease()).isEqualTo(Duration.ofSeconds(7));

        one.release();
        waiting.get(10, java.util.concurrent.TimeUnit.SECONDS).release();
        two.release();
        // the last release's reply told this JVM the semaphore is free again (on a busy machine a
        // release may return before its reply, which then comes in the background)
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(semaphore.localState())
                .isEqualTo(new LocalState(name, 0, 0, true, null, null, new TreeMap<>(), new ReportedUsage(3, 0, 0))));
    }

    @Test
    void theLocalStateCarriesTheFleetsFiguresAsTheNewestReplyToldThem() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3));
        RedisSemaphore otherJvm = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3));
        assertThat(semaphore.localState().reportedUsage()).as("before any reply").isNull();

        Permit two = semaphore.tryAcquire(2, Duration.ZERO).orElseThrow();
        assertThat(semaphore.localState().reportedUsage()).isEqualTo(new ReportedUsage(3, 2, 0));
        assertThat(semaphore.localState().reportedUsage().available()).isEqualTo(1);

        Permit elsewhere = otherJvm.tryAcquire().orElseThrow();
        var waiting = otherJvm.acquireAsync(1, Duration.ofSeconds(30));
        // (queued in Redis before the override below, which is to grant it: acquireAsync returns before its call lands)
        await().atMost(Duration.ofSeconds(10))
                .until(() -> otherJvm.state().waiters().size() == 1);
        // another JVM's calls tell this one nothing: its figures are those of its own last reply
        assertThat(semaphore.localState().reportedUsage()).isEqualTo(new ReportedUsage(3, 2, 0));
        semaphore.overrideLimit(5);
        // the override's own reply: the waiter is granted in the same script call
        assertThat(semaphore.localState().reportedUsage()).isEqualTo(new ReportedUsage(5, 4, 0));
        semaphore.clearLimitOverride();
        assertThat(semaphore.localState().reportedUsage())
                .as("held above a limit lowered under them: none available, not a negative count")
                .isEqualTo(new ReportedUsage(3, 4, 0))
                .extracting(ReportedUsage::available).isEqualTo(0);

        waiting.get(10, java.util.concurrent.TimeUnit.SECONDS).release();
        elsewhere.release();
        two.release();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(semaphore.localState().reportedUsage())
                .isEqualTo(new ReportedUsage(3, 0, 0)));
    }

    @Test
    void aCapReportsItsKeysTogetherAndEachKeyItsOwnFigures() throws Exception {
        SemaphoreRegistry registry = newRegistry(builder -> builder.configure(name,
                SemaphoreSettings.DEFAULTS.withPermits(2).withTotalPermits(3)));
        SemaphoreCap cap = registry.cap(name);
        assertThat(cap.reportedUsage()).as("before any reply").isNull();

        Permit acme = cap.semaphore("acme").tryAcquire().orElseThrow();
        Permit globex = cap.semaphore("globex").tryAcquire(2, Duration.ZERO).orElseThrow();

        assertThat(cap.reportedUsage()).isEqualTo(new ReportedUsage(3, 3, 0));
        assertThat(cap.semaphore("acme").localState().reportedUsage()).isEqualTo(new ReportedUsage(2, 1, 0));
        assertThat(cap.semaphore("globex").localState().reportedUsage()).isEqualTo(new ReportedUsage(2, 2, 0));
        cap.overrideLimit(4);
        assertThat(cap.reportedUsage()).isEqualTo(new ReportedUsage(4, 3, 0));
        assertThat(cap.reportedUsage().available()).isEqualTo(1);
        cap.clearLimitOverride();
        acme.release();
        globex.release();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cap.reportedUsage())
                .isEqualTo(new ReportedUsage(3, 0, 0)));
    }

    @Test
    void inUseNeverMakesASemaphore() {
        SemaphoreRegistry registry = newRegistry(builder -> builder.configure("configured",
                SemaphoreSettings.DEFAULTS.withPermits(2)));

        assertThat(registry.inUse("configured")).as("configured, not used").isEmpty();
        assertThat(registry.inUse("bad name")).isEmpty();
        assertThat(registry.semaphores()).isEmpty();

        RedisSemaphore used = registry.semaphore("configured");
        assertThat(registry.inUse("configured")).containsSame(used);
        registry.semaphore("tenants:acme").tryAcquire().orElseThrow().release();
        assertThat(registry.inUse("tenants:acme")).isPresent();
        io.github.redissemaphore.core.internal.Engines.evictIdleKeyed(registry);
        assertThat(registry.inUse("tenants:acme")).as("forgotten").isEmpty();
        assertThat(registry.semaphores()).containsExactly(used);
    }
}
