package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.Usage;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The rate in the scripts ({@code _rate.lua}, R1..R3), called script by script: seeded random walks
 * of callers of three JVMs on a semaphore with a few permits and a rate of a few grants per few
 * hundred ms, so that the walk crosses many windows. Every grant is recorded at the server time of
 * the call that made it (a holder that was not one before the call). After every step:
 * <ul>
 *   <li>R1: any rate-limit + 1 grants in a row span at least rate-period of server time (so no
 *       window of rate-period holds more than rate-limit), and the invariants I1..I6 hold with the
 *       permits (never more held than permits);</li>
 *   <li>liveness: a head of the queue that both limits allow, at the server time of the call, has
 *       been granted (so nobody waits for a slot that is free, nor for a permit that is);</li>
 *   <li>a caller that did not wait and was refused for the rate ({@link Acquired.Status#RATE_LIMITED})
 *       found the window full, with permits it fitted, and was told exactly when a slot frees;</li>
 *   <li>a reply with waiters and a full window names, as its earliest moment, at most the ms
 *       until a slot frees (the timer the waiting JVMs set);</li>
 *   <li>the window's key lives exactly rate-period past its newest grant, and holds at most
 *       rate-limit entries.</li>
 * </ul>
 * Steps also sleep a few ms now and then, and "fire the timer": sleep until the moment the last
 * reply named, then renew from one or two JVMs (two timers for one slot must grant once).
 * A walk's seed is printed with any failure: {@code -Drate.seed=N} replays it.
 */
@RedisTest
class RateScriptModelTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration HEARTBEAT = Duration.ofSeconds(30);
    private static final int STEPS = 400;

    private RawScripts commands;
    private StringRedisTemplate redis;
    private String prefix;
    private final AtomicInteger names = new AtomicInteger();

    @BeforeEach
    void connect(RedisServer server) {
        commands = new RawScripts(server.connectionFactory(RawScripts.TIMEOUT));
        redis = new StringRedisTemplate(server.connectionFactory());
        prefix = server.keyPrefix();
        RateCostTest.warm(commands, prefix);
    }

    @Test
    void aSeededWalkOfFairCallersNeverGrantsMoreThanTheRateInAnyWindow() {
        for (long seed : seeds()) {
            new Walk(seed, true).run();
        }
    }

    @Test
    void aSeededWalkOfUnfairCallersNeverGrantsMoreThanTheRateInAnyWindow() {
        for (long seed : seeds()) {
            new Walk(seed, false).run();
        }
    }

    /**
     * The queue's bound and prediction count the rate: with the window full for a minute, a waiter
     * queues with its slot's moment as its predicted wait, and the caller refused for the full
     * queue is told when the slot after it frees (the later of the queue's and the window's).
     */
    @Test
    void aCallerRefusedForAFullQueueIsToldWhenTheWindowWouldServeIt() {
        SemaphoreKeys keys = SemaphoreKeys.of(prefix, "rate-bound-" + names.incrementAndGet())
                .withRate(2, Duration.ofMinutes(1));
        String inbox = prefix + ":inbox:j1";
        for (String id : List.of("g1", "g2")) {
            assertThat(commands.acquire(keys, 5, id, 1, LEASE, true, HEARTBEAT, inbox, "test", 1, Duration.ZERO)
                    .status()).isEqualTo(Acquired.Status.GRANTED);
        }
        Acquired queued = commands.acquire(keys, 5, "w1", 1, LEASE, true, HEARTBEAT, inbox, "test", 1, Duration.ZERO);
        assertThat(queued.status()).as("permits free, the window full: it waits").isEqualTo(Acquired.Status.QUEUED);
        assertThat(queued.predictedWaitMillis()).as("its slot, g1's, frees a minute after g1")
                .isBetween(55_000L, 60_000L);
        assertThat(queued.usage().earliestLeaseEndMillis())
                .as("the moment the waiting JVM calls again: at the latest when the slot frees (its heartbeat's "
                        + "deadline, 30 s, comes first)")
                .isPositive().isLessThanOrEqualTo(queued.predictedWaitMillis());
        Acquired full = commands.acquire(keys, 5, "w2", 1, LEASE, true, HEARTBEAT, inbox, "test", 1, Duration.ZERO);
        assertThat(full.status()).isEqualTo(Acquired.Status.FULL);
        assertThat(full.predictedWaitMillis()).as("the slot after w1's: g2's").isBetween(55_000L, 60_000L);
        Acquired later = commands.acquire(keys, 5, "w3", 1, LEASE, true, HEARTBEAT, inbox, "test", 0,
                Duration.ofSeconds(30));
        assertThat(later.status()).as("predicted to wait longer than the 30 s it allows")
                .isEqualTo(Acquired.Status.TOO_LONG);
        for (String id : List.of("g1", "g2")) {
            commands.release(keys, 5, id);
        }
        commands.cancel(keys, 5, "w1", true);
    }

    private static List<Long> seeds() {
        String replay = System.getProperty("rate.seed");
        if (replay != null) {
            return List.of(Long.parseLong(replay));
        }
        long base = System.nanoTime();
        return List.of(base, base + 1);
    }

    /** One semaphore of its own, STEPS random calls, each checked. */
    private final class Walk {

        private final long seed;
        private final boolean fair;
        private final Random random;
        private final int limit;
        private final int rate;
        private final long period;
        /** The op the next step runs instead of a random one (a caller of op 0..4 then does not wait); -1: none. */
        private int forcedOp = -1;
        private final SemaphoreKeys keys;
        /** The first three keys only, as {@link ScriptSnapshot} reads an uncapped semaphore. */
        private final SemaphoreKeys plain;
        private final String rateKey;
        private final String label;
        private final String[] inboxes;
        /** Server ms of every grant, in order. */
        private final List<Long> grants = new ArrayList<>();
        /**
         * The rate in force: the configured one, or the runtime rate an override step set (R4), and
         * the index in {@link #grants} of the first grant made under it.
         */
        private int curRate;
        private long curPeriod;
        private int epochStart;
        /** The largest rate and period in force so far: the window's list may keep their entries. */
        private int mostRate;
        private long mostPeriod;
        private int overrides;
        private int ids;
        private int rateRefusals;
        private int timerGrants;
        /** The earliest moment (server ms) the last reply named, -1: none. */
        private long wakeAtMs = -1;

        Walk(long seed, boolean fair) {
            this.seed = seed;
            this.fair = fair;
            this.random = new Random(seed);
            this.limit = 1 + random.nextInt(3);
            this.rate = 1 + random.nextInt(3);
            this.period = 300 + random.nextInt(400);
            String name = "rate-" + names.incrementAndGet();
            this.plain = SemaphoreKeys.of(prefix, name);
            this.keys = plain.withRate(rate, Duration.ofMillis(period));
            this.rateKey = keys.all().get(3);
            this.curRate = rate;
            this.curPeriod = period;
            this.mostRate = rate;
            this.mostPeriod = period;
            this.inboxes = new String[] {prefix + ":inbox:j1", prefix + ":inbox:j2", prefix + ":inbox:j3"};
            this.label = (fair ? "fair" : "unfair") + " walk seed=" + seed + " (permits " + limit + ", rate " + rate
                    + " per " + period + " ms)";
        }

        void run() {
            for (int step = 0; step < STEPS; step++) {
                step(label + " step " + step);
            }
            // A walk that met no full window (a fair queue refuses a caller before the rate does, and a
            // slow machine lets windows age out between steps) meets one now, each step checked as
            // above: no waiter left, then callers that do not wait, each released, until the window is full.
            for (int step = 0; rateRefusals == 0 && step < 300; step++) {
                forcedOp = !sortedQueue(ScriptSnapshot.take(redis, plain)).isEmpty() ? 7 : step % 2 == 0 ? 0 : 5;
                step(label + " finale " + step);
            }
            forcedOp = -1;
            System.out.printf("%s: %d grants, %d refused for the rate, %d granted by a timer, %d runtime rates%n", label,
                    grants.size(), rateRefusals, timerGrants, overrides);
            assertThat(overrides).as("%s: the walk set runtime rates", label).isPositive();
            commands.overrideRate(keys, limit, 0, Duration.ZERO);
            assertThat(rateRefusals).as("%s: the walk met a full window", label).isPositive();
            assertThat(grants.size()).as("%s: the walk granted across windows", label).isGreaterThan(rate * 3);
            drain();
        }

        private void step(String at) {
            ScriptSnapshot before = ScriptSnapshot.take(redis, plain);
            List<String> waiting = sortedQueue(before);
            List<String> holding = new ArrayList<>(before.holders().keySet());
            int op = forcedOp >= 0 ? forcedOp : random.nextInt(12);
            Usage usage;
            Acquired acquired = null;
            boolean timer = false;
            if (op < 5) {
                String id = "c" + ids++;
                boolean wait = forcedOp < 0 && random.nextBoolean();
                acquired = commands.acquire(keys, limit, id, 1, LEASE, wait, fair, HEARTBEAT,
                        inboxes[random.nextInt(inboxes.length)], "test");
                usage = acquired.usage();
            } else if (op < 7 && !holding.isEmpty()) {
                String id = holding.get(random.nextInt(holding.size()));
                usage = commands.release(keys, limit, id, 0, before.infoOf(id).inbox()).usage();
            } else if (op < 8 && !waiting.isEmpty()) {
                usage = commands.cancel(keys, limit, waiting.get(random.nextInt(waiting.size())), true).usage();
            } else if (op < 10 && !waiting.isEmpty()) {
                // The timer of the waiting JVMs: at the moment the last reply named, one JVM or two renew.
                sleepUntilServerMs(wakeAtMs);
                timer = true;
                String inbox = before.infoOf(waiting.get(0)).inbox();
                usage = commands.renew(keys, limit, HEARTBEAT, inbox, idsOf(before, inbox)).usage();
                if (random.nextBoolean()) {
                    String other = inboxes[random.nextInt(inboxes.length)];
                    ScriptSnapshot between = ScriptSnapshot.take(redis, plain);
                    record(before, between, usage, at, true);
                    before = between;
                    usage = commands.renew(keys, limit, HEARTBEAT, other, idsOf(between, other)).usage();
                }
            } else if (op == 11 && random.nextInt(3) == 0) {
                // R4: a runtime rate, or the configured one again; its grants are checked under it.
                if (random.nextBoolean()) {
                    curRate = 1 + random.nextInt(3);
                    curPeriod = 300 + random.nextInt(400);
                    usage = commands.overrideRate(keys, limit, curRate, Duration.ofMillis(curPeriod));
                } else {
                    curRate = rate;
                    curPeriod = period;
                    usage = commands.overrideRate(keys, limit, 0, Duration.ZERO);
                }
                overrides++;
                mostRate = Math.max(mostRate, curRate);
                mostPeriod = Math.max(mostPeriod, curPeriod);
                // (The call may grant under the new rate: those grants are its epoch's.)
                epochStart = grants.size();
            } else {
                LockSupport.parkNanos(Duration.ofMillis(random.nextInt((int) period / 4 + 1)).toNanos());
                return;
            }
            ScriptSnapshot after = ScriptSnapshot.take(redis, plain);
            long nowMs = record(before, after, usage, at, timer);
            wakeAtMs = usage.earliestLeaseEndMillis() >= 0 ? nowMs + usage.earliestLeaseEndMillis() : -1;
            checkRate(at, grants.subList(epochStart, grants.size()));
            assertThat(after.violations(limit)).as("%s: the invariants, %s", at, after).isEmpty();
            int inWindow = inWindow(nowMs);
            if (acquired != null && acquired.status() == Acquired.Status.RATE_LIMITED) {
                rateRefusals++;
                // (The list holds at most every grant of the window: after a longer runtime period
                // it may hold fewer, never more, so a refusal means the rate's count at least.)
                assertThat(inWindow).as("%s: refused for the rate with %s granted in the window", at, inWindow)
                        .isGreaterThanOrEqualTo(curRate);
                if (overrides == 0) {
                    assertThat(inWindow).as("%s: refused with the window exactly full", at).isEqualTo(rate);
                }
                assertThat(before.used()).as("%s: refused for the rate, it fitted the permits", at)
                        .isLessThan(limit);
                assertThat(acquired.predictedWaitMillis()).as("%s: when the window frees a slot", at)
                        .isEqualTo(grants.get(grants.size() - curRate) + curPeriod - nowMs);
            }
            List<String> queue = sortedQueue(after);
            if (!queue.isEmpty()) {
                boolean permitFree = after.used() + after.infoOf(queue.get(0)).count() <= limit;
                assertThat(permitFree && inWindow < curRate)
                        .as("%s: head %s waits though both limits allow it (used %s, %s in the window)", at,
                                queue.get(0), after.used(), inWindow)
                        .isFalse();
                if (inWindow == curRate && listed(nowMs) == curRate) {
                    long slotFrees = grants.get(grants.size() - curRate) + curPeriod - nowMs;
                    assertThat(usage.earliestLeaseEndMillis()).as("%s: the moment a waiting JVM calls again", at)
                            .isBetween(0L, slotFrees);
                }
            }
            checkWindowKey(at);
        }

        /** @return the server ms of the call; records its grants (holders that were not before it) */
        private long record(ScriptSnapshot before, ScriptSnapshot after, Usage usage, String at, boolean timer) {
            long nowMs = usage.serverMicros() / 1000;
            for (String id : after.holders().keySet()) {
                if (!before.holders().containsKey(id)) {
                    grants.add(nowMs);
                    if (timer) {
                        timerGrants++;
                    }
                }
            }
            return nowMs;
        }

        private int inWindow(long nowMs) {
            return (int) grants.stream().filter(granted -> nowMs - granted < curPeriod).count();
        }

        /** @return the window list's entries within the period in force at {@code nowMs} */
        private int listed(long nowMs) {
            List<String> entries = redis.opsForList().range(rateKey, 0, -1);
            return entries == null ? 0
                    : (int) entries.stream().filter(entry -> nowMs - Long.parseLong(entry) < curPeriod).count();
        }

        /**
         * R1 under the rate in force (R4: the runtime rate never lets more through in any window of
         * its period): any curRate + 1 of its grants in a row span at least curPeriod.
         */
        private void checkRate(String at, List<Long> all) {
            for (int i = 0; i + curRate < all.size(); i++) {
                assertThat(all.get(i + curRate) - all.get(i))
                        .as("%s: grants %s..%s of %s, more than %s within %s ms", at, i, i + curRate, all, curRate,
                                curPeriod)
                        .isGreaterThanOrEqualTo(curPeriod);
            }
        }

        /** The window key: at most rate entries, expiring rate-period past its newest. */
        private void checkWindowKey(String at) {
            List<String> entries = redis.opsForList().range(rateKey, 0, -1);
            if (entries == null || entries.isEmpty()) {
                return;
            }
            assertThat(entries).as("%s: the window's entries", at).hasSizeLessThanOrEqualTo(mostRate);
            long newest = Long.parseLong(entries.get(entries.size() - 1));
            assertThat(newest).as("%s: the window's newest entry is the last grant", at)
                    .isEqualTo(grants.get(grants.size() - 1));
            Long ttl = redis.getExpire(rateKey, java.util.concurrent.TimeUnit.MILLISECONDS);
            // (-2: it expired meanwhile, its newest entry aged out.)
            assertThat(ttl).as("%s: the window's TTL", at).isNotNull().isNotEqualTo(-1L).isLessThanOrEqualTo(mostPeriod);
        }

        /** Leave nothing: every waiter and holder goes, and the window ages out by itself. */
        private void drain() {
            ScriptSnapshot last = ScriptSnapshot.take(redis, plain);
            for (String id : last.queue().keySet()) {
                commands.cancel(keys, limit, id, true);
            }
            for (String id : ScriptSnapshot.take(redis, plain).holders().keySet()) {
                commands.release(keys, limit, id);
            }
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !Boolean.TRUE.equals(redis.hasKey(rateKey)));
        }

        /** Sleeps until the server clock reaches {@code serverMs} (at most a period; none: returns). */
        private void sleepUntilServerMs(long serverMs) {
            if (serverMs < 0) {
                return;
            }
            long now = ScriptSnapshot.take(redis, plain).nowMs();
            long ms = Math.min(serverMs - now, period);
            if (ms > 0) {
                LockSupport.parkNanos(Duration.ofMillis(ms).toNanos());
            }
        }
    }

    private static List<String> sortedQueue(ScriptSnapshot snapshot) {
        return snapshot.queue().entrySet().stream().sorted(Map.Entry.comparingByValue())
                .map(Map.Entry::getKey).toList();
    }

    /** @return the ids {@code inbox}'s JVM holds or waits with, as its renew names them */
    private static List<String> idsOf(ScriptSnapshot snapshot, String inbox) {
        List<String> ids = new ArrayList<>();
        snapshot.info().forEach((id, record) -> {
            if (inbox.equals(snapshot.infoOf(id).inbox())) {
                ids.add(id);
            }
        });
        ids.sort(Comparator.naturalOrder());
        return ids;
    }
}
