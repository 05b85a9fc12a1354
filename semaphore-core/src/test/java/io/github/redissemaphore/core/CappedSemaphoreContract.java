package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.Engines;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * Two-level limits through the engine: keys of one capped semaphore ({@code "<name>:<key>"}, each
 * {@code permits}) under one cap ({@code totalPermits}), taken and given back at both levels in
 * one step, waiters served per key in arrival order and across keys by the fair share, dead holders
 * and waiters cleared at both levels, runtime limits of a key and of the cap. Runs on a standalone
 * Redis and on a 3-master cluster (every key of a capped semaphore in one slot).
 */
abstract class CappedSemaphoreContract extends SemaphoreTestBase {

    private static final Duration LONG_WAIT = Duration.ofSeconds(30);
    /** 2 per key, 3 in all. */
    private static final SemaphoreSettings CAPPED = SemaphoreSettings.DEFAULTS.withPermits(2).withTotalPermits(3);

    protected CappedSemaphoreContract(RedisTarget target) {
        super(target);
    }

    private SemaphoreRegistry registry(SemaphoreSettings settings) {
        return newRegistry(builder -> builder.configure(name, settings));
    }

    @Override
    protected String keysOf(String semaphore) {
        return target().keyPrefix() + ":{" + semaphore + "}:capped:*";
    }

    @Test
    void eachKeyUpToItsPermitsAndAllKeysTogetherUpToTheCap() {
        SemaphoreCap cap = registry(CAPPED).cap(name);
        RedisSemaphore acme = cap.semaphore("acme");
        RedisSemaphore globex = cap.semaphore("globex");

        Permit a1 = acme.tryAcquire().orElseThrow();
        Permit a2 = acme.tryAcquire().orElseThrow();
        assertThat(acme.tryAcquire()).as("acme is full").isEmpty();
        Permit g1 = globex.tryAcquire().orElseThrow();
        assertThat(globex.tryAcquire()).as("the cap is full, globex is not").isEmpty();

        SemaphoreState state = acme.state();
        assertThat(state.used()).isEqualTo(2);
        assertThat(state.limit()).isEqualTo(2);
        assertThat(state.total()).isNotNull();
        assertThat(state.total().used()).isEqualTo(3);
        assertThat(state.total().limit()).isEqualTo(3);
        assertThat(state.total().available()).isZero();
        SemaphoreState whole = cap.state();
        assertThat(whole.used()).isEqualTo(3);
        assertThat(whole.limit()).isEqualTo(3);
        assertThat(whole.holders()).extracting(SemaphoreState.Holder::key)
                .containsExactlyInAnyOrder("acme", "acme", "globex");

        a1.release();
        Permit g2 = globex.tryAcquire().orElseThrow();
        assertThat(g2.fencingToken()).as("one counter: tokens increase per key").isGreaterThan(g1.fencingToken());
        List.of(a2, g1, g2).forEach(Permit::release);
        assertThat(cap.state().used()).isZero();
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void aFullKeyBlocksNoOtherKeyAndTheCapGoesToTheKeyHoldingTheFewest() throws Exception {
        SemaphoreCap cap = registry(CAPPED).cap(name);
        SemaphoreCap otherJvm = registry(CAPPED).cap(name);
        Permit a1 = cap.semaphore("acme").tryAcquire().orElseThrow();
        Permit a2 = cap.semaphore("acme").tryAcquire().orElseThrow();
        Permit g1 = cap.semaphore("globex").tryAcquire().orElseThrow();

        // acme waits for its key and the cap; globex and initech for the cap only.
        CompletableFuture<Permit> acmeWaiter = otherJvm.semaphore("acme").acquireAsync(1, LONG_WAIT);
        await().until(() -> cap.state().waiters().size() == 1);
        CompletableFuture<Permit> globexWaiter = otherJvm.semaphore("globex").acquireAsync(1, LONG_WAIT);
        await().until(() -> cap.state().waiters().size() == 2);
        CompletableFuture<Permit> initechWaiter = otherJvm.semaphore("initech").acquireAsync(1, LONG_WAIT);
        await().until(() -> cap.state().waiters().size() == 3);

        // acme gives one back: acme and globex hold 1 each, initech none: initech is served.
        a1.release();
        Permit initech = initechWaiter.get(10, TimeUnit.SECONDS);
        assertThat(acmeWaiter).isNotDone();
        assertThat(globexWaiter).isNotDone();

        // globex gives its one back: acme holds 1, globex none: globex is served, not acme (earlier).
        g1.release();
        Permit globex = globexWaiter.get(10, TimeUnit.SECONDS);
        assertThat(acmeWaiter).isNotDone();

        // A newcomer of a fourth key does not overtake acme, which waits for the cap.
        assertThat(otherJvm.semaphore("hooli").tryAcquire()).isEmpty();
        initech.release();
        Permit acme = acmeWaiter.get(10, TimeUnit.SECONDS);
        List.of(a2, globex, acme).forEach(Permit::release);
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void aTenantWithAHundredQueuedCallsDoesNotStarveThreeOthers() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(5).withTotalPermits(5);
        SemaphoreCap cap = registry(settings).cap(name);
        SemaphoreCap smallTenants = registry(settings).cap(name);
        RedisSemaphore flood = cap.semaphore("flood");
        List<Permit> held = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            held.add(flood.tryAcquire().orElseThrow());
        }
        List<CompletableFuture<Permit>> queued = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            queued.add(flood.acquireAsync(1, LONG_WAIT));
        }
        await().until(() -> cap.state().waiters().size() == 100);
        Map<String, Long> servedAt = new ConcurrentHashMap<>();
        List<CompletableFuture<Permit>> small = new ArrayList<>();
        for (String tenant : List.of("b", "c", "d")) {
            small.add(smallTenants.semaphore(tenant).acquireAsync(1, LONG_WAIT)
                    .whenComplete((permit, error) -> servedAt.put(tenant, System.nanoTime())));
            int waiting = 101 + small.size() - 1;
            await().until(() -> cap.state().waiters().size() == waiting);
        }
        // The flood's holders end one after another. Each permit freed goes to the small tenant
        // that holds the fewest and came first (b, then c, then d), never to the flood, which
        // holds the most: the next holder ends once the previous grant has been seen.
        Duration hold = Duration.ofSeconds(2);
        List<String> tenants = List.of("b", "c", "d");
        try (SchedulingNoise noise = new SchedulingNoise()) {
            long firstFreed = System.nanoTime();
            long[] freed = new long[3];
            for (int i = 0; i < 3; i++) {
                freed[i] = System.nanoTime();
                held.get(i).release();
                small.get(i).get(10, TimeUnit.SECONDS);
                for (int later = i + 1; later < 3; later++) {
                    assertThat(small.get(later)).as("tenant %s after %d permits freed", tenants.get(later), i + 1)
                            .isNotDone();
                }
                assertThat(queued.stream().filter(CompletableFuture::isDone).count())
                        .as("the flood's waiters served after %d permits freed", i + 1).isZero();
            }
            for (CompletableFuture<Permit> permit : small) {
                permit.get(10, TimeUnit.SECONDS).release();
            }
            for (int i = 0; i < 3; i++) {
                String tenant = tenants.get(i);
                long waited = TimeUnit.NANOSECONDS.toMillis(servedAt.get(tenant) - firstFreed);
                long late = noise.during(firstFreed, servedAt.get(tenant)).toMillis();
                System.out.printf("Starvation: tenant %s served %d ms after the first permit freed, %d ms after the"
                        + " %s one (bound %d ms, 100 calls of the flood queued first; a 10 ms JDK timer ran up to"
                        + " %d ms late meanwhile)%n", tenant, waited,
                        TimeUnit.NANOSECONDS.toMillis(servedAt.get(tenant) - freed[i]), i == 0 ? "1st" : i == 1 ? "2nd"
                        : "3rd", hold.toMillis(), late);
                // All three within the bound, widened by however late the machine let any timer run.
                assertThat(waited).as("tenant " + tenant).isLessThan(hold.toMillis() + late);
            }
        }
        assertThat(queued.stream().filter(CompletableFuture::isDone).count())
                .as("the flood's waiters served before the small tenants were").isLessThanOrEqualTo(3);
        held.subList(3, 5).forEach(Permit::release);
        for (CompletableFuture<Permit> permit : queued) {
            permit.get(30, TimeUnit.SECONDS).release();
        }
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void aDeadJvmsPermitsComeBackToBothLevelsWithinTheirLease() throws Exception {
        SemaphoreSettings shortLease = CAPPED.withLeaseTime(Duration.ofSeconds(1));
        SemaphoreRegistry dying = registry(shortLease);
        SemaphoreCap survivor = registry(shortLease).cap(name);
        List<Permit> dyingPermits = List.of(dying.cap(name).semaphore("acme").tryAcquire().orElseThrow(),
                dying.cap(name).semaphore("acme").tryAcquire().orElseThrow(),
                dying.cap(name).semaphore("globex").tryAcquire().orElseThrow());
        CompletableFuture<Permit> acme = survivor.semaphore("acme").acquireAsync(2, LONG_WAIT);
        CompletableFuture<Permit> initech = survivor.semaphore("initech").acquireAsync(1, LONG_WAIT);
        // Both queued; or, on a machine so loaded that a renewal of the dying JVM came back after its
        // 1 s lease, already served: then only with a permit the dying JVM itself no longer holds.
        await().until(() -> survivor.state().waiters().size() == 2 || acme.isDone() || initech.isDone());
        if (acme.isDone() || initech.isDone()) {
            assertThat(dyingPermits).as("a waiter served before the holder died: a permit it lost")
                    .anyMatch(permit -> !permit.isHeld());
        }

        long killed = System.nanoTime();
        Engines.halt(dying);
        Permit acmePermit = acme.get(10, TimeUnit.SECONDS);
        Permit initechPermit = initech.get(10, TimeUnit.SECONDS);
        System.out.printf("Dead JVM: its 3 permits served to 2 keys within %d ms (lease 1000 ms)%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
        SemaphoreState whole = survivor.state();
        assertThat(whole.used()).isEqualTo(3);
        assertThat(whole.holders()).extracting(SemaphoreState.Holder::permitId)
                .containsExactlyInAnyOrder(acmePermit.id(), initechPermit.id());
        acmePermit.release();
        initechPermit.release();
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void aDeadWaiterBlocksItsKeyAndTheCapNoLongerThanItsHeartbeatAndClaim() throws Exception {
        SemaphoreRegistry dying = registry(CAPPED);
        SemaphoreCap survivor = registry(CAPPED).cap(name);
        Permit a = survivor.semaphore("acme").tryAcquire().orElseThrow();
        Permit g1 = survivor.semaphore("globex").tryAcquire().orElseThrow();
        Permit g2 = survivor.semaphore("globex").tryAcquire().orElseThrow();
        dying.cap(name).semaphore("acme").acquireAsync(1, LONG_WAIT);
        await().until(() -> survivor.state().waiters().size() == 1);
        CompletableFuture<Permit> next = survivor.semaphore("acme").acquireAsync(1, LONG_WAIT);
        await().until(() -> survivor.state().waiters().size() == 2);

        Engines.halt(dying);
        long killed = System.nanoTime();
        g1.release();
        // The dead waiter may be granted a claim first: heartbeat (2 s) + claim (2 s) + ticks at most.
        Permit served = next.get(10, TimeUnit.SECONDS);
        System.out.printf("Dead waiter: the next of its key served %d ms after its JVM died (heartbeat 2000 ms)%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
        List.of(a, g2, served).forEach(Permit::release);
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void racesOfBothLevelsLeaveNoPermitBehindAndNeverExceedEitherLimit() throws Exception {
        SemaphoreSettings settings = CAPPED.withLeaseTime(Duration.ofSeconds(2));
        List<SemaphoreCap> jvms = List.of(registry(settings).cap(name), registry(settings).cap(name));
        List<String> keys = List.of("k0", "k1", "k2", "k3");
        Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<String> violations = new CopyOnWriteArrayList<>();
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        AtomicInteger cancelled = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Random random = new Random(t);
            runs.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 40; i++) {
                    String key = keys.get(random.nextInt(keys.size()));
                    RedisSemaphore semaphore = jvms.get(random.nextInt(2)).semaphore(key);
                    // Waits that end as permits are released (grant x deadline), futures cancelled
                    // as they may be granted (grant x cancel), releases as other leases run out.
                    CompletableFuture<Permit> call = semaphore.acquireAsync(1 + random.nextInt(2),
                            Duration.ofMillis(random.nextInt(60)));
                    if (random.nextInt(4) == 0) {
                        call.cancel(true);
                    }
                    // The two endings a wait here may have besides a grant: its deadline passed
                    // (a rejection), or this loop cancelled it. Anything else (a timeout of this
                    // get, Redis unavailable, a bug) fails the run.
                    Permit permit;
                    try {
                        permit = call.get(10, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        if (e.getCause() instanceof SemaphoreRejectedException) {
                            rejected.incrementAndGet();
                            continue;
                        }
                        throw new AssertionError("a wait on " + key + " failed", e);
                    } catch (CancellationException e) {
                        if (!call.isCancelled()) {
                            throw new AssertionError("a wait on " + key + " ended cancelled without a cancel", e);
                        }
                        cancelled.incrementAndGet();
                        continue;
                    } catch (InterruptedException | TimeoutException e) {
                        throw new AssertionError("a wait on " + key + " did not end within 10 s", e);
                    }
                    granted.incrementAndGet();
                    int inKey = inside.computeIfAbsent(key, k -> new AtomicInteger()).addAndGet(permit.count());
                    int inAll = total.addAndGet(permit.count());
                    most.accumulateAndGet(inAll, Math::max);
                    if (inKey > 2 || inAll > 3) {
                        violations.add(key + ": " + inKey + " inside the key, " + inAll + " in all");
                    }
                    sleepQuietly(random.nextInt(15));
                    inside.get(key).addAndGet(-permit.count());
                    total.addAndGet(-permit.count());
                    permit.release();
                }
            }, threads));
        }
        CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        threads.shutdown();
        System.out.printf("Races of two levels: %d grants, %d rejections, %d cancelled, at most %d inside of 3%n",
                granted.get(), rejected.get(), cancelled.get(), most.get());
        assertThat(violations).isEmpty();
        assertThat(granted.get()).isPositive();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            SemaphoreState whole = jvms.get(0).state();
            assertThat(whole.used()).isZero();
            assertThat(whole.waiters()).isEmpty();
        });
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void aReleaseOfOneKeyCrossingTheExpiryOfAnotherKeysHolderGivesBothBack() throws Exception {
        // 1 per key would do; the cap of 2 is what binds: acme's and globex's holders fill it.
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(2).withTotalPermits(2);
        SemaphoreSettings unrenewed = settings.withLeaseTime(Duration.ofMillis(800)).withAutoRenew(false);
        SemaphoreRegistry expiring = registry(unrenewed);
        SemaphoreCap releasing = registry(settings).cap(name);
        for (int round = 0; round < 4; round++) {
            Permit lapsing = expiring.semaphore(name, "acme", unrenewed).tryAcquire().orElseThrow();
            // Its end as this JVM measures it (from before the call: no later than Redis' own).
            long lapsesAt = System.nanoTime() + lapsing.leaseRemaining().toNanos();
            Permit released = releasing.semaphore("globex").tryAcquire().orElseThrow();
            CompletableFuture<Permit> first = releasing.semaphore("initech").acquireAsync(1, LONG_WAIT);
            CompletableFuture<Permit> second = releasing.semaphore("hooli").acquireAsync(1, LONG_WAIT);
            int waiting = 2;
            await().until(() -> releasing.state().waiters().size() == waiting);
            // The release is aimed a little before, at and after the lease's end, round by round: at
            // a moment of that lease, not a fixed time after the waiters queued (which on a loaded
            // machine may itself take past the end). Nothing below depends on where it lands: both
            // waiters are served and both permits come back whichever comes first.
            long aim = lapsesAt + TimeUnit.MILLISECONDS.toNanos(-100 + round * 50L);
            long untilAim = aim - System.nanoTime();
            if (untilAim > 0) {
                TimeUnit.NANOSECONDS.sleep(untilAim);
            }
            long releasedAt = System.nanoTime();
            released.release();
            Permit one = first.get(10, TimeUnit.SECONDS);
            Permit two = second.get(10, TimeUnit.SECONDS);
            System.out.printf("Release crossing an expiry, round %d: released %+d ms from the lease's end (aimed at"
                    + " %+d ms)%n", round, TimeUnit.NANOSECONDS.toMillis(releasedAt - lapsesAt), -100 + round * 50);
            assertThat(lapsing.isHeld()).isFalse();
            SemaphoreState whole = releasing.state();
            assertThat(whole.used()).as("round " + round).isEqualTo(2);
            assertThat(whole.holders()).extracting(SemaphoreState.Holder::key).containsExactlyInAnyOrder("initech",
                    "hooli");
            one.release();
            two.release();
        }
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void runtimeLimitsOfAKeyAndOfTheCapApplyToEveryJvm() throws Exception {
        SemaphoreCap cap = registry(CAPPED).cap(name);
        SemaphoreCap otherJvm = registry(CAPPED).cap(name);
        cap.overrideLimit(1);
        Permit first = otherJvm.semaphore("acme").tryAcquire().orElseThrow();
        assertThat(otherJvm.semaphore("globex").tryAcquire()).as("the cap lowered to 1").isEmpty();
        assertThat(otherJvm.state().limitSource()).isEqualTo(SemaphoreState.OVERRIDE);
        CompletableFuture<Permit> waiting = otherJvm.semaphore("globex").acquireAsync(1, LONG_WAIT);
        await().until(() -> cap.state().waiters().size() == 1);
        cap.clearLimitOverride();
        Permit served = waiting.get(10, TimeUnit.SECONDS);

        cap.semaphore("acme").overrideLimit(1);
        assertThat(otherJvm.semaphore("acme").tryAcquire()).as("acme lowered to 1").isEmpty();
        assertThat(otherJvm.semaphore("acme").state().limit()).isEqualTo(1);
        assertThat(otherJvm.semaphore("initech").tryAcquire()).isPresent().get().satisfies(Permit::release);
        cap.semaphore("acme").clearLimitOverride();
        Permit second = otherJvm.semaphore("acme").tryAcquire().orElseThrow();
        List.of(first, served, second).forEach(Permit::release);
        assertNothingLeftButExpiringKeys();
    }

    @Test
    void aCappedSemaphoreWithoutAKeyIsRefusedWithNothingWritten() {
        SemaphoreRegistry registry = registry(CAPPED);
        assertThatThrownBy(() -> registry.semaphore(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("totalPermits 3").hasMessageContaining("used per key");
        assertThatThrownBy(() -> registry.cap("not-capped-" + name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no totalPermits");
        assertThatThrownBy(() -> CAPPED.withTotalPermits(1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("totalPermits must be 0 (no shared cap) or between 2 (permits) and 1000000, but was 1");
        assertThatThrownBy(() -> CAPPED.withTotalPermits(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("but was -1");
        assertThat(target().keys(target().keyPrefix() + ":{" + name + "}*")).isEmpty();
        assertThat(target().keys(target().keyPrefix() + ":{not-capped-" + name + "}*")).isEmpty();
    }

    /** Idle keys and an idle cap leave no field behind, and every key of the cap expires. */
    private void assertNothingLeftButExpiringKeys() {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            SemaphoreState whole = newRegistry(builder -> builder.configure(name, CAPPED)).cap(name).state();
            assertThat(whole.used()).isZero();
            assertThat(whole.waiters()).isEmpty();
        });
        assertEveryKeyExpires();
        StateFields fields = new StateFields(target(), target().keyPrefix() + ":{" + name + "}:capped:state");
        assertThat(fields.keyFields()).as("fields of idle keys").isEmpty();
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The ' k:' fields of a capped semaphore's state key. */
    private record StateFields(RedisTarget target, String key) {

        List<String> keyFields() {
            org.springframework.data.redis.connection.RedisConnectionFactory factory = target.newConnectionFactory();
            try {
                List<String> fields = new ArrayList<>();
                for (Object field : new org.springframework.data.redis.core.StringRedisTemplate(factory).opsForHash()
                        .keys(key)) {
                    if (field.toString().startsWith(" k:")) {
                        fields.add(field.toString());
                    }
                }
                return fields;
            } finally {
                if (factory instanceof org.springframework.beans.factory.DisposableBean disposable) {
                    try {
                        disposable.destroy();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        }
    }
}
