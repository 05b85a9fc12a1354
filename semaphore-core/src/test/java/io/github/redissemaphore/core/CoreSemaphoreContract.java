package io.github.redissemaphore.core;


import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The non-waiting half of the engine: grants, releases, leases, renewal, loss, fencing tokens.
 * Runs on a standalone Redis and on a 3-master cluster.
 */
abstract class CoreSemaphoreContract extends SemaphoreTestBase {

    protected CoreSemaphoreContract(RedisTarget target) {
        super(target);
    }

    private static final SemaphoreSettings THREE = SemaphoreSettings.DEFAULTS.withPermits(3);

    @Test
    void grantsUpToThePermitsAndOneMoreAfterARelease() {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);

        Permit first = semaphore.tryAcquire().orElseThrow();
        Permit second = semaphore.tryAcquire().orElseThrow();
        Permit third = semaphore.tryAcquire().orElseThrow();
        assertThat(semaphore.tryAcquire()).isEmpty();
        assertThat(semaphore.state().used()).isEqualTo(3);

        second.release();
        Optional<Permit> fourth = semaphore.tryAcquire();
        assertThat(fourth).isPresent();
        assertThat(semaphore.tryAcquire()).isEmpty();

        List.of(first, third, fourth.get()).forEach(Permit::release);
        assertThat(semaphore.state().used()).isZero();
        assertThat(semaphore.state().available()).isEqualTo(3);
    }

    @Test
    void aMultiPermitGrantCountsAsMany() throws InterruptedException {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);

        Permit two = semaphore.tryAcquire(2, Duration.ZERO).orElseThrow();
        assertThat(two.count()).isEqualTo(2);
        assertThat(semaphore.tryAcquire(2, Duration.ZERO)).isEmpty();
        Permit one = semaphore.tryAcquire().orElseThrow();
        assertThat(semaphore.tryAcquire()).isEmpty();

        SemaphoreState state = semaphore.state();
        assertThat(state.used()).isEqualTo(3);
        assertThat(state.holders()).extracting(SemaphoreState.Holder::count).containsExactlyInAnyOrder(2, 1);

        two.release();
        assertThat(semaphore.state().used()).isEqualTo(1);
        one.release();
    }

    @Test
    void aRuntimeLimitIsFollowedByEveryJvmUntilItIsCleared() {
        RedisSemaphore operator = newRegistry().semaphore(name, THREE);
        RedisSemaphore other = newRegistry().semaphore(name, THREE);
        assertThat(other.state()).extracting(SemaphoreState::limit, SemaphoreState::configuredLimit,
                SemaphoreState::limitSource).containsExactly(3, 3, SemaphoreState.CONFIGURED);

        operator.overrideLimit(1);

        assertThat(other.state()).extracting(SemaphoreState::limit, SemaphoreState::configuredLimit,
                SemaphoreState::limitSource).containsExactly(1, 3, SemaphoreState.OVERRIDE);
        Permit only = other.tryAcquire().orElseThrow();
        assertThat(operator.tryAcquire()).isEmpty();
        assertThat(other.tryAcquire()).isEmpty();

        // Raised above what either JVM is configured with: both follow.
        operator.overrideLimit(4);
        List<Permit> more = List.of(operator.tryAcquire().orElseThrow(), other.tryAcquire().orElseThrow(),
                operator.tryAcquire().orElseThrow());
        assertThat(other.tryAcquire()).isEmpty();
        assertThat(other.state()).extracting(SemaphoreState::limit, SemaphoreState::used, SemaphoreState::available)
                .containsExactly(4, 4, 0);

        other.clearLimitOverride();

        // Back to 3: 4 held stay held (nothing is revoked), and nobody is granted until one fits.
        SemaphoreState cleared = operator.state();
        assertThat(cleared).extracting(SemaphoreState::limit, SemaphoreState::used, SemaphoreState::available,
                SemaphoreState::limitSource).containsExactly(3, 4, 0, SemaphoreState.CONFIGURED);
        assertThat(only.isHeld()).isTrue();
        assertThat(more).allMatch(Permit::isHeld);
        only.release();
        more.get(0).release();
        assertThat(operator.tryAcquire()).isPresent();
        assertEveryKeyExpires();
    }

    @Test
    void aLoweredLimitTakesNoPermitBackAndARaisedOneServesTheWaitersAtOnce() throws Exception {
        RedisSemaphore holders = newRegistry().semaphore(name, THREE);
        RedisSemaphore waiters = newRegistry().semaphore(name, THREE);
        List<Permit> held = List.of(holders.tryAcquire().orElseThrow(), holders.tryAcquire().orElseThrow(),
                holders.tryAcquire().orElseThrow());
        CompletableFuture<Permit> first = waiters.acquireAsync(1, Duration.ofSeconds(60));
        await().until(() -> holders.state().waiters().size() == 1);
        CompletableFuture<Permit> second = waiters.acquireAsync(1, Duration.ofSeconds(60));
        await().until(() -> holders.state().waiters().size() == 2);

        holders.overrideLimit(1);
        held.get(0).release();
        held.get(1).release();
        // 1 held, limit 1: nobody is served, and the holders keep theirs.
        assertThat(holders.state()).extracting(SemaphoreState::used, SemaphoreState::limit).containsExactly(1, 1);
        assertThat(first).isNotDone();
        assertThat(held.get(2).isHeld()).isTrue();

        holders.overrideLimit(3);

        // Both fit now: the override call itself serves them.
        assertThat(first.get(30, TimeUnit.SECONDS).isHeld()).isTrue();
        assertThat(second.get(30, TimeUnit.SECONDS).isHeld()).isTrue();
        assertThat(second.join().fencingToken()).isGreaterThan(first.join().fencingToken());
        holders.clearLimitOverride();
        assertEveryKeyExpires();
    }

    @Test
    void aJvmLearnsOfAnotherConfiguredWithOtherPermitsUnlessARuntimeLimitIsSet() {
        RedisSemaphore two = newRegistry().semaphore(name,
                SemaphoreSettings.DEFAULTS.withPermits(2));
        RedisSemaphore four = newRegistry().semaphore(name,
                SemaphoreSettings.DEFAULTS.withPermits(4));
        two.state();
        assertThat(two.localState().otherConfiguredLimits()).isEmpty();

        four.state();
        two.state();

        assertThat(four.localState().otherConfiguredLimits()).containsOnlyKeys(2);
        assertThat(two.localState().otherConfiguredLimits()).containsOnlyKeys(4);

        // While a runtime limit is set the configured ones do not count: nothing new is noted.
        RedisSemaphore three = newRegistry().semaphore(name, THREE);
        three.overrideLimit(2);
        two.state();
        three.state();
        assertThat(three.localState().otherConfiguredLimits()).isEmpty();
        three.clearLimitOverride();
    }

    @Test
    void stateShowsHoldersWithOwnerTokenAndLease() {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);
        Permit permit = semaphore.tryAcquire().orElseThrow();

        SemaphoreState state = semaphore.state();
        assertThat(state.name()).isEqualTo(name);
        assertThat(state.limit()).isEqualTo(3);
        assertThat(state.holders()).singleElement().satisfies(holder -> {
            assertThat(holder.permitId()).isEqualTo(permit.id()).matches("[A-Za-z0-9_-]{22}"); // 128 random bits, URL-safe base64
            assertThat(holder.fencingToken()).isEqualTo(permit.fencingToken());
            assertThat(holder.owner()).contains("/" + ProcessHandle.current().pid() + "/")
                    .endsWith(Thread.currentThread().getName());
            assertThat(holder.leaseRemaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
        });
        permit.release();
    }

    @Test
    void neverMoreHoldersThanPermitsUnderContention() throws Exception {
        int permits = 3;
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(permits);
        List<RedisSemaphore> jvms = List.of(newRegistry().semaphore(name, settings),
                newRegistry().semaphore(name, settings));
        int threadsPerJvm = 16;
        Contention.Result result = Contention.run(jvms, threadsPerJvm, 120, RedisSemaphore::tryAcquire);

        assertThat(result.most()).isEqualTo(permits);
        assertThat(result.granted()).isGreaterThan(threadsPerJvm);
        assertThat(jvms.get(0).state().used()).isZero();
        assertEveryKeyExpires();
    }

    @Test
    void aLeaseWithoutRenewalExpiresAndFreesThePermit() {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(300)).withAutoRenew(false);
        RedisSemaphore holderJvm = newRegistry().semaphore(name, settings);
        RedisSemaphore otherJvm = newRegistry().semaphore(name, settings);

        Permit permit = holderJvm.tryAcquire().orElseThrow();
        assertThat(otherJvm.tryAcquire()).isEmpty();

        Permit next = await().atMost(Duration.ofSeconds(5)).until(otherJvm::tryAcquire, Optional::isPresent).get();
        assertThat(permit.isHeld()).isFalse();
        assertThat(next.fencingToken()).isGreaterThan(permit.fencingToken());
        next.release();
    }

    @Test
    void aRenewedLeaseOutlivesManyLeaseTimesAndNobodyElseGetsIt() {
        // Renewed every 500 ms: a renewal may come back a whole second late on a loaded machine.
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(1500));
        RedisSemaphore holderJvm = newRegistry().semaphore(name, settings);
        RedisSemaphore otherJvm = newRegistry().semaphore(name, settings);
        Permit permit = holderJvm.tryAcquire().orElseThrow();
        AtomicInteger lost = new AtomicInteger();
        permit.onLost(p -> lost.incrementAndGet());

        // Three lease times, probing all along: the holder keeps it, the other never gets it.
        await().during(Duration.ofMillis(4500)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> otherJvm.tryAcquire().isEmpty() && permit.isHeld());
        assertThat(lost).hasValue(0);
        assertThat(holderJvm.state().holders()).singleElement()
                .satisfies(holder -> assertThat(holder.permitId()).isEqualTo(permit.id()));
        permit.release();
        assertThat(otherJvm.tryAcquire()).isPresent();
    }

    @Test
    void aLeaseWipedFromRedisIsReportedLostOnceWithinATick() {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(600));
        RedisSemaphore semaphore = newRegistry().semaphore(name, settings);
        RedisSemaphore operatorJvm = newRegistry().semaphore(name, settings);
        Permit permit = semaphore.tryAcquire().orElseThrow();
        AtomicInteger lost = new AtomicInteger();
        AtomicLong lostAt = new AtomicLong();
        permit.onLost(p -> {
            lostAt.compareAndSet(0, System.nanoTime());
            lost.incrementAndGet();
        });

        try (SchedulingNoise noise = new SchedulingNoise()) {
            // Someone else ends the lease (as the endpoint's force release does).
            assertThat(operatorJvm.forceRelease(permit.id())).isTrue();
            long wiped = System.nanoTime();

            // Within 2 s (a renewal is due every 200 ms), plus however late the machine let any
            // timer run meanwhile: waited for longer, so that a late report fails on its bound.
            await().atMost(Duration.ofSeconds(15)).until(() -> lost.get() == 1);
            noise.assertTookLessThan("the wiped lease reported lost", wiped, lostAt.get(), Duration.ofSeconds(2));
        }
        assertThat(permit.isHeld()).isFalse();
        AtomicInteger lateListener = new AtomicInteger();
        permit.onLost(p -> lateListener.incrementAndGet());
        assertThat(lateListener).hasValue(1);
        permit.release();
        assertThat(lost).hasValue(1);
    }

    @Test
    void fencingTokensIncreaseAcrossRegistries() {
        RedisSemaphore a = newRegistry().semaphore(name, THREE);
        RedisSemaphore b = newRegistry().semaphore(name, THREE);
        long last = 0;
        for (int i = 0; i < 50; i++) {
            Permit permit = (i % 2 == 0 ? a : b).tryAcquire().orElseThrow();
            assertThat(permit.fencingToken()).isGreaterThan(last);
            last = permit.fencingToken();
            permit.release();
        }
    }

    @Test
    void fencingTokensIncreaseAcrossKeyExpiry() {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(100));
        RedisSemaphore semaphore = newRegistry().semaphore(name, settings);
        Permit before = semaphore.tryAcquire().orElseThrow();
        before.release();

        // Idle: every key of the semaphore goes away by itself.
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
                .until(() -> target().keys(keysOf(name)).isEmpty());

        Permit after = semaphore.tryAcquire().orElseThrow();
        assertThat(after.fencingToken()).isGreaterThan(before.fencingToken());
        after.release();
    }

    @Test
    void releasingTwiceAfterExpiryOrAMadeUpIdChangesNothingForOthers() {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(2)
                .withLeaseTime(Duration.ofMillis(200)).withAutoRenew(false);
        RedisSemaphore semaphore = newRegistry().semaphore(name, settings);
        RedisSemaphore renewed = newRegistry().semaphore(name, settings.withAutoRenew(true)
                .withLeaseTime(Duration.ofSeconds(30)));
        Permit other = renewed.tryAcquire().orElseThrow();

        Permit mine = semaphore.tryAcquire().orElseThrow();
        mine.release();
        mine.release();
        mine.close();
        assertThat(semaphore.state().used()).isEqualTo(1);

        Permit expiring = semaphore.tryAcquire().orElseThrow();
        await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().used() == 1);
        expiring.release();
        assertThat(semaphore.forceRelease("00000000000000000000000000000000")).isFalse();

        SemaphoreState state = semaphore.state();
        assertThat(state.used()).isEqualTo(1);
        assertThat(state.holders()).singleElement()
                .satisfies(holder -> assertThat(holder.permitId()).isEqualTo(other.id()));
        assertThat(other.isHeld()).isTrue();
        other.release();
    }

    /**
     * The Redis work inside the hot-path scripts, counted (MONITOR shows the commands a script
     * runs): a regression that adds calls shows here. Figures for an uncontended acquire and
     * release on a semaphore that already has holders: 4 and 5 commands (TIME; one HMGET of the
     * state fields and the caller's own record; the deadline, ZADD or ZREM; the record, removed by
     * an HDEL on release; one HSET of the state with the new record); the first acquire after the
     * last holder left also gives the deadlines key it creates its TTL.
     */
    @Test
    void hotPathScriptsRunABoundedNumberOfRedisCommands() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);
        Permit first = semaphore.tryAcquire().orElseThrow();
        List<CommandMonitor> monitors = target().monitors();
        try {
            for (int i = 0; i < 5; i++) {
                Permit[] permit = new Permit[1];
                assertThat(CommandMonitor.scriptCommandsDuring(monitors,
                        () -> permit[0] = semaphore.tryAcquire().orElseThrow())).hasSizeLessThanOrEqualTo(4);
                assertThat(CommandMonitor.scriptCommandsDuring(monitors, permit[0]::release))
                        .hasSizeLessThanOrEqualTo(5);
            }
            first.release();
            Permit[] fresh = new Permit[1];
            assertThat(CommandMonitor.scriptCommandsDuring(monitors,
                    () -> fresh[0] = semaphore.tryAcquire().orElseThrow())).hasSizeLessThanOrEqualTo(5);
            fresh[0].release();
        } finally {
            for (CommandMonitor monitor : monitors) {
                monitor.close();
            }
        }
    }

    @Test
    void oneRedisCallPerUncontendedAcquireAndPerRelease() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);
        semaphore.tryAcquire().orElseThrow().release(); // loads the script once

        // INFO commandstats: one EVALSHA per operation...
        long evalshaBefore = target().commandCalls().getOrDefault("evalsha", 0L);
        for (int i = 0; i < 10; i++) {
            semaphore.tryAcquire().orElseThrow().release();
        }
        assertThat(target().commandCalls().getOrDefault("evalsha", 0L) - evalshaBefore).isEqualTo(20);

        // ...and MONITOR, which tells a client's own commands from those its scripts run: nothing else.
        List<CommandMonitor> monitors = target().monitors();
        try {
            Permit[] permit = new Permit[1];
            assertThat(CommandMonitor.commandsDuring(monitors, () -> permit[0] = semaphore.tryAcquire().orElseThrow()))
                    .singleElement().asString().containsIgnoringCase("\"evalsha\"");
            assertThat(CommandMonitor.commandsDuring(monitors, permit[0]::release))
                    .singleElement().asString().containsIgnoringCase("\"evalsha\"");
        } finally {
            for (CommandMonitor monitor : monitors) {
                monitor.close();
            }
        }
    }
}
