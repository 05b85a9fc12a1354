package io.github.redissemaphore.core;

import static io.github.redissemaphore.core.RaceFixture.awaitIdle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Waiting with the rate, through the registry, two registries on connections of their own
 * standing for two JVMs: a waiter held back only by the rate is granted when the window frees a
 * slot (on the timer the reply named, not the next tick), in arrival order across the JVMs; the
 * rate's timer crossing a release, a deadline and a cancel leaks nothing and never grants past the
 * rate; two JVMs' timers firing for one slot grant it once. A grant's fencing token is the server
 * time of its grant in µs (the counter never runs below the clock, and moves by one per ticket), so
 * the tokens tell when each grant was made, on the clock the window keeps.
 */
@RedisTest
class RateWaitingTest {

    private static final Duration PERIOD = Duration.ofMillis(300);

    private final RedisServer server;
    private final RaceFixture fixture;
    private final SchedulingNoise noise;
    private final StringRedisTemplate redis;
    private String name;

    RateWaitingTest(RedisServer server) {
        this.server = server;
        this.fixture = new RaceFixture(server);
        this.noise = fixture.noise();
        this.redis = new StringRedisTemplate(server.connectionFactory());
    }

    @BeforeEach
    void nameAfterTest(TestInfo test) {
        name = RaceFixture.nameAfter(test);
    }

    @AfterEach
    void closeAll() {
        fixture.close();
    }

    private SemaphoreSettings rated(int permits, int rate) {
        return new SemaphoreSettings(permits, Duration.ofSeconds(30), Duration.ofSeconds(20), true, true)
                .withRateLimit(rate, PERIOD);
    }

    /**
     * A backlog of 16 callers, 8 from each JVM, queued one after the other, on 4 permits and a rate
     * of 1 per 300 ms, each releasing at once: they are granted in the order they queued, one
     * window apart at least (R1), and each within a few tens of ms of the moment its slot freed
     * (server time of its grant against the previous grant's plus the period), widened by the
     * machine's measured scheduling lateness. Prints p50/p99 of slot-free to granted (server) and to
     * held by the caller (client).
     */
    @Test
    void aBacklogHeldBackByTheRateIsServedInArrivalOrderAsEachSlotFrees() throws Exception {
        List<RedisSemaphore> jvms = List.of(fixture.registry(server.connectionFactory()).semaphore(name, rated(4, 1)),
                fixture.registry(server.connectionFactory()).semaphore(name, rated(4, 1)));
        // The first grant fills the window, so every caller after it queues.
        jvms.get(0).tryAcquire().orElseThrow().release();
        List<CompletableFuture<Permit>> callers = new ArrayList<>();
        ConcurrentLinkedQueue<long[]> heard = new ConcurrentLinkedQueue<>();
        long start = System.nanoTime();
        for (int i = 0; i < 16; i++) {
            int index = i;
            CompletableFuture<Permit> caller = jvms.get(i % 2).acquireAsync(1, Duration.ofSeconds(20));
            callers.add(caller.whenComplete((permit, error) -> {
                if (permit != null) {
                    heard.add(new long[] {index, permit.fencingToken(), System.currentTimeMillis()});
                    permit.release();
                }
            }));
            int queued = i + 1;
            await().atMost(Duration.ofSeconds(10)).until(() -> caller.isDone()
                    || jvms.get(0).state().waiters().size() >= queued - countDone(callers));
        }
        CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        long end = System.nanoTime();
        List<long[]> grants = new ArrayList<>(heard);
        grants.sort((a, b) -> Long.compare(a[1], b[1]));
        List<Long> order = grants.stream().map(g -> g[0]).toList();
        assertThat(order).as("granted in the order they queued").isSorted();
        List<Long> serverLatency = new ArrayList<>();
        List<Long> clientLatency = new ArrayList<>();
        for (int i = 1; i < grants.size(); i++) {
            long slotFreesMs = grants.get(i - 1)[1] / 1000 + PERIOD.toMillis();
            long grantedMs = grants.get(i)[1] / 1000;
            assertThat(grantedMs).as("grant %s at least a window after the one before (R1)", i)
                    .isGreaterThanOrEqualTo(slotFreesMs);
            serverLatency.add(grantedMs - slotFreesMs);
            clientLatency.add(grants.get(i)[2] - slotFreesMs);
        }
        Collections.sort(serverLatency);
        Collections.sort(clientLatency);
        Duration late = noise.during(start, end);
        System.out.printf("slot free -> granted (server) p50 %d ms, p99 %d ms; -> held by the caller p50 %d ms,"
                        + " p99 %d ms; %s%n", percentile(serverLatency, 50), percentile(serverLatency, 99),
                percentile(clientLatency, 50), percentile(clientLatency, 99), noise.stop());
        assertThat(percentile(serverLatency, 50)).as("median slot free -> granted, lateness %s", late)
                .isLessThan(50 + late.toMillis());
        assertThat(serverLatency.get(serverLatency.size() - 1)).as("worst slot free -> granted, lateness %s", late)
                .isLessThan(200 + late.toMillis());
        awaitIdle(jvms.get(0), "after the backlog");
    }

    /**
     * The window is full and both JVMs wait (each has a waiter, both heard the moment the slot
     * frees): both timers fire for the one slot, and exactly one grant is made; the other waiter is
     * granted one window later.
     */
    @Test
    void twoJvmsTimersFiringForOneSlotGrantItOnce() throws Exception {
        RedisSemaphore a = fixture.registry(server.connectionFactory()).semaphore(name, rated(2, 1));
        RedisSemaphore b = fixture.registry(server.connectionFactory()).semaphore(name, rated(2, 1));
        a.tryAcquire().orElseThrow().release();
        for (int round = 0; round < 5; round++) {
            CompletableFuture<Permit> first = a.acquireAsync(1, Duration.ofSeconds(10));
            await().until(() -> a.state().waiters().size() == 1);
            CompletableFuture<Permit> second = b.acquireAsync(1, Duration.ofSeconds(10));
            Permit one = first.get(10, TimeUnit.SECONDS);
            Permit two = second.get(10, TimeUnit.SECONDS);
            assertThat(two.fencingToken() / 1000 - one.fencingToken() / 1000)
                    .as("round %s: the second grant a window after the first", round)
                    .isGreaterThanOrEqualTo(PERIOD.toMillis());
            one.release();
            two.release();
        }
        awaitIdle(a, "after the rounds");
    }

    /**
     * The rate's timer crossing a release, a deadline and a cancel: a holder of the one permit
     * releases, the waiter's wait ends, or its caller cancels, at moments around the slot freeing.
     * Whatever wins, nothing leaks, the keys keep their invariants, and no window holds more than
     * the rate's grants (the tokens of the grants, one window apart).
     */
    @Test
    void theRateTimerCrossingAReleaseADeadlineAndACancelLeaksNothing() throws Exception {
        RedisSemaphore holderJvm = fixture.registry(server.connectionFactory()).semaphore(name, rated(1, 1));
        RedisSemaphore waiterJvm = fixture.registry(server.connectionFactory()).semaphore(name, rated(1, 1));
        List<Long> tokens = new ArrayList<>();
        long[] offsetsMs = {-20, -5, 0, 5, 20};
        for (String what : List.of("release", "deadline", "cancel")) {
            for (long offset : offsetsMs) {
                Permit held = holderJvm.tryAcquire().orElse(null);
                if (held == null) {
                    // The window is full: wait for its slot, then take it.
                    held = holderJvm.acquire(1, Duration.ofSeconds(5));
                }
                tokens.add(held.fencingToken());
                long slotFreesNanos = System.nanoTime() + PERIOD.toNanos();
                long crossAt = slotFreesNanos + TimeUnit.MILLISECONDS.toNanos(offset);
                Duration wait = what.equals("deadline")
                        ? Duration.ofNanos(crossAt - System.nanoTime()) : Duration.ofSeconds(5);
                CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, wait);
                if (what.equals("release")) {
                    sleepUntil(crossAt);
                    held.release();
                } else {
                    // The permit is free in time: only the rate holds the waiter back.
                    held.release();
                    if (what.equals("cancel")) {
                        sleepUntil(crossAt);
                        waiter.cancel(true);
                    }
                }
                try {
                    Permit got = waiter.join();
                    tokens.add(got.fencingToken());
                    got.release();
                } catch (CompletionException | java.util.concurrent.CancellationException e) {
                    // refused at its deadline, or cancelled: either is fine, as long as nothing leaks
                }
                awaitIdle(holderJvm, what + " at " + offset + " ms");
            }
        }
        fixture.assertCleanKeys(name, 1);
        Collections.sort(tokens);
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i) / 1000 - tokens.get(i - 1) / 1000).as("grants %s and %s of %s", i - 1, i, tokens)
                    .isGreaterThanOrEqualTo(PERIOD.toMillis());
        }
        // Idle, the window ages out and leaves nothing.
        String window = SemaphoreKeys.of(fixture.prefix(), name).withRate(1, PERIOD).all().get(3);
        await().atMost(Duration.ofSeconds(5)).until(() -> !Boolean.TRUE.equals(redis.hasKey(window)));
    }

    /**
     * A keyed semaphore's rate is per key, as its permits are: one tenant's full window refuses that
     * tenant only, and each key's window is a key of its own slot that leaves nothing when idle.
     */
    @Test
    void aKeyedSemaphoresRateIsPerKey() {
        SemaphoreRegistry registry = fixture.registry(server.connectionFactory());
        SemaphoreSettings settings = rated(3, 2).withWaitTime(Duration.ZERO);
        RedisSemaphore acme = registry.semaphore(name, "acme", settings);
        RedisSemaphore globex = registry.semaphore(name, "globex", settings);
        acme.tryAcquire().orElseThrow().release();
        acme.tryAcquire().orElseThrow().release();
        assertThat(acme.tryAcquire()).as("acme's window is full").isEmpty();
        assertThat(globex.tryAcquire()).as("globex's is not").hasValueSatisfying(Permit::release);
        for (String key : List.of("acme", "globex")) {
            String window = SemaphoreKeys.of(fixture.prefix(), name + ":" + key).withRate(2, PERIOD).all().get(3);
            await().atMost(Duration.ofSeconds(5)).until(() -> !Boolean.TRUE.equals(redis.hasKey(window)));
        }
        assertThat(acme.tryAcquire()).as("acme's window aged out").hasValueSatisfying(Permit::release);
    }

    /** {@code state()} shows the window's use: the grants of the last period, and when a slot frees once it is full. */
    @Test
    void theStateShowsTheWindowsUse() {
        SemaphoreRegistry registry = fixture.registry(server.connectionFactory());
        RedisSemaphore payments = registry.semaphore(name, new SemaphoreSettings(5, Duration.ofSeconds(30),
                Duration.ZERO, true, true).withRateLimit(3, Duration.ofMinutes(1)));
        assertThat(registry.semaphore(name + "-plain", SemaphoreSettings.DEFAULTS).state().rateWindow())
                .as("no rate, no window").isNull();
        assertThat(payments.state().rateWindow()).isEqualTo(new SemaphoreState.RateWindow(0, Duration.ZERO, 3, Duration.ofMinutes(1), false));
        payments.tryAcquire().orElseThrow().release();
        Permit held = payments.tryAcquire().orElseThrow();
        assertThat(payments.state().rateWindow()).as("released or held, each grant counts")
                .isEqualTo(new SemaphoreState.RateWindow(2, Duration.ZERO, 3, Duration.ofMinutes(1), false));
        payments.tryAcquire().orElseThrow().release();
        SemaphoreState.RateWindow full = payments.state().rateWindow();
        assertThat(full.grants()).isEqualTo(3);
        assertThat(full.untilSlotFrees()).isGreaterThan(Duration.ofSeconds(50)).isLessThanOrEqualTo(Duration.ofMinutes(1));
        held.release();
    }

    private static int countDone(List<CompletableFuture<Permit>> callers) {
        return (int) callers.stream().filter(CompletableFuture::isDone).count();
    }

    private static long percentile(List<Long> sorted, int p) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
