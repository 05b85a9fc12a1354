package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.redis.SemaphoreCommands;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Acquired;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Cancelled;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Released;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Renewed;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Usage;
import io.github.redissemaphore.core.redis.SemaphoreKeys;
import io.github.redissemaphore.core.redis.SemaphoreScripts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The scripts on their own, called through {@link SemaphoreCommands} (and raw, for bad arguments):
 * whatever id a client sends, in whatever order, no script errors and the data-model invariants of
 * {@code _common.lua} hold after every call, checked by reading the keys ({@link ScriptSnapshot}).
 */
@RedisTest
class ScriptInvariantsTest {

    private static final String PREFIX = "script-test";
    /** Nobody listens: grants are published into the void, as for a waiter whose JVM is gone. */
    private static final String INBOX = PREFIX + ":inbox:nobody";
    private static final String OWNER = "test-host/1/main";
    private static final int LIMIT = 3;
    private static final Duration LEASE = Duration.ofSeconds(60);
    /** The waiter heartbeat, hence the claim lease of a grant from the queue. */
    private static final Duration HEARTBEAT = Duration.ofSeconds(30);
    /** Leases and heartbeats meant to run out during the test. */
    private static final Duration SHORT = Duration.ofMillis(500);

    /** The id under test ("T") and the others every scenario has around it. */
    private static final String T = "T";
    private static final String O = "O";
    private static final String H = "H";
    private static final String W = "W";
    private static final String U = "U";

    /** What the id under test is when the scripts are called on it. */
    enum Kind {
        /** never used */
        UNKNOWN,
        /** granted directly, lease running */
        GRANTED,
        /** granted directly, lease ended but not purged yet */
        EXPIRED,
        /** granted, then released */
        RELEASED,
        /** granted from the queue: a claim lease its JVM has not confirmed */
        CLAIM,
        /** in the queue */
        QUEUED,
        /** queued, then cancelled */
        CANCELLED,
        /** granted directly, then cancelled with release (the reproduction of the issue) */
        CANCELLED_GRANTED,
        /** in the queue, heartbeat missed but not purged yet */
        LAPSED,
        /** granted from the queue, claim ended unconfirmed but not purged yet */
        EXPIRED_CLAIM;

        boolean holds() {
            return this == GRANTED || this == CLAIM;
        }

        boolean waits() {
            return this == QUEUED;
        }
    }

    enum Op { ACQUIRE, RELEASE, CANCEL, CANCEL_RELEASE, RENEW, STATE }

    /** One semaphore of its own, its id under test made {@code kind}, then {@code steps} run on it. */
    record Scenario(String label, Kind kind, SemaphoreKeys keys, List<Op> ops, List<String> targets) {
        @Override
        public String toString() {
            return label + "[" + kind + ", " + ops + " on " + targets + "]";
        }
    }

    private SemaphoreCommands commands;
    private StringRedisTemplate redis;
    private final AtomicInteger names = new AtomicInteger();

    @BeforeEach
    void connect(RedisServer server) {
        RedisConnectionFactory factory = server.connectionFactory();
        commands = new SemaphoreCommands(factory, SemaphoreScripts.load());
        redis = new StringRedisTemplate(factory);
    }

    // --- the reproduction of the issue ------------------------------------------------------------

    @Test
    void cancelWithReleaseOfAGrantedIdReturnsItsTokenAndLeaksNoPermit() {
        SemaphoreKeys keys = keys("repro");
        Acquired first = checked(keys, 2, "acquire id1", () -> acquire(keys, 2, "id1", 1, Duration.ofSeconds(1),
                HEARTBEAT));
        Acquired second = checked(keys, 2, "acquire id2", () -> acquire(keys, 2, "id2", 1, LEASE, HEARTBEAT));
        assertThat(first.status()).isEqualTo(Acquired.Status.GRANTED);
        assertThat(second.status()).isEqualTo(Acquired.Status.GRANTED);

        Cancelled cancelled = checked(keys, 2, "cancel id1 release", () -> commands.cancel(keys, 2, "id1", true));

        assertThat(cancelled.grantedToken()).isEqualTo(first.token());
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.used()).isEqualTo(1);
        assertThat(after.holders()).containsOnlyKeys("id2");

        // 1.5 s after id1's grant (its lease would have ended by then anyway): a permit is free.
        awaitServerTime(first.usage().serverMicros() / 1000 + 1500);
        Acquired third = checked(keys, 2, "acquire id3", () -> acquire(keys, 2, "id3", 1, LEASE, HEARTBEAT));
        assertThat(third.status()).isEqualTo(Acquired.Status.GRANTED);
        assertThat(ScriptSnapshot.take(redis, keys).used()).isEqualTo(2);
    }

    @Test
    void cancelWithoutReleaseOfAGrantedIdReturnsItsTokenAndKeepsItHeld() {
        SemaphoreKeys keys = keys("repro-keep");
        Acquired first = checked(keys, 2, "acquire id1", () -> acquire(keys, 2, "id1", 1, Duration.ofSeconds(1),
                HEARTBEAT));
        checked(keys, 2, "acquire id2", () -> acquire(keys, 2, "id2", 1, LEASE, HEARTBEAT));

        Cancelled cancelled = checked(keys, 2, "cancel id1 keep", () -> commands.cancel(keys, 2, "id1", false));

        assertThat(cancelled.grantedToken()).isEqualTo(first.token());
        ScriptSnapshot kept = ScriptSnapshot.take(redis, keys);
        assertThat(kept.used()).isEqualTo(2);
        assertThat(kept.holders()).containsOnlyKeys("id1", "id2");
        Acquired refused = checked(keys, 2, "acquire id3 (full)",
                () -> commands.acquire(keys, 2, "id3", 1, LEASE, false, true, HEARTBEAT, INBOX, OWNER));
        assertThat(refused.status()).isEqualTo(Acquired.Status.REFUSED);

        // id1 kept its own lease (1 s from the cancel): once it ends, its permit is free again.
        awaitServerTime(kept.holders().get("id1") + 1);
        Acquired third = checked(keys, 2, "acquire id3", () -> acquire(keys, 2, "id3", 1, LEASE, HEARTBEAT));
        assertThat(third.status()).isEqualTo(Acquired.Status.GRANTED);
        assertThat(ScriptSnapshot.take(redis, keys).holders()).containsOnlyKeys("id2", "id3");
    }

    // --- every script on every kind of id ---------------------------------------------------------

    @Test
    void everyScriptOnEveryKindOfIdInEveryOrderOfTwoKeepsTheInvariants() {
        List<Scenario> scenarios = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            for (Op first : Op.values()) {
                for (Op second : Op.values()) {
                    scenarios.add(scenario("pair", kind, List.of(first, second), List.of(T, T)));
                }
            }
        }
        runAll(scenarios);
    }

    @Test
    void randomSequencesOnEveryIdOfEveryKindKeepTheInvariants() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<String> ids = List.of(T, T, O, H, W, U);
        List<Scenario> scenarios = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
            List<Op> ops = new ArrayList<>();
            List<String> targets = new ArrayList<>();
            for (int step = 0; step < 5; step++) {
                ops.add(Op.values()[random.nextInt(Op.values().length)]);
                targets.add(ids.get(random.nextInt(ids.size())));
            }
            scenarios.add(scenario("seed " + seed + " #" + i, kind, ops, targets));
        }
        runAll(scenarios);
    }

    /** Sets every scenario up, waits once for the short leases and heartbeats to end, then runs them. */
    private void runAll(List<Scenario> scenarios) {
        for (Scenario s : scenarios) {
            setUp(s);
        }
        awaitServerTime(serverMillis() + SHORT.toMillis() + 5);
        for (Scenario s : scenarios) {
            for (int step = 0; step < s.ops().size(); step++) {
                Op op = s.ops().get(step);
                String id = s.targets().get(step);
                ScriptSnapshot before = ScriptSnapshot.take(redis, s.keys());
                Object reply = checked(s.keys(), LIMIT, s + " step " + step + " " + op + " " + id,
                        () -> call(s.keys(), op, id));
                if (step == 0 && T.equals(id)) {
                    expectFirst(s, op, reply, before, ScriptSnapshot.take(redis, s.keys()));
                }
            }
        }
    }

    private Scenario scenario(String label, Kind kind, List<Op> ops, List<String> targets) {
        return new Scenario(label, kind, keys(kind.name().toLowerCase()), ops, targets);
    }

    /** Builds the scenario's semaphore (limit 3; O holds 1, W waits for 1) and makes T of its kind. */
    private void setUp(Scenario s) {
        SemaphoreKeys k = s.keys();
        switch (s.kind()) {
            case UNKNOWN -> {
                hold(k, O, 1, LEASE);
                hold(k, H, 2, LEASE);
                queue(k, W, 1, HEARTBEAT);
            }
            case GRANTED -> {
                hold(k, O, 1, LEASE);
                hold(k, T, 2, LEASE);
                queue(k, W, 1, HEARTBEAT);
            }
            case EXPIRED -> {
                hold(k, O, 1, LEASE);
                hold(k, T, 2, SHORT);
                queue(k, W, 1, HEARTBEAT);
            }
            case RELEASED -> {
                hold(k, O, 1, LEASE);
                hold(k, T, 2, LEASE);
                queue(k, W, 1, HEARTBEAT);
                assertThat(checked(k, LIMIT, s + " setup release", () -> commands.release(k, LIMIT, T)).released())
                        .isTrue();
            }
            case CLAIM, QUEUED, CANCELLED -> {
                hold(k, O, 1, LEASE);
                hold(k, H, 2, LEASE);
                queue(k, T, 2, HEARTBEAT);
                queue(k, W, 1, HEARTBEAT);
                if (s.kind() == Kind.CLAIM) {
                    assertThat(checked(k, LIMIT, s + " setup release H", () -> commands.release(k, LIMIT, H))
                            .released()).isTrue();
                } else if (s.kind() == Kind.CANCELLED) {
                    assertThat(checked(k, LIMIT, s + " setup cancel", () -> commands.cancel(k, LIMIT, T, false))
                            .grantedToken()).isZero();
                }
            }
            case CANCELLED_GRANTED -> {
                hold(k, O, 1, LEASE);
                Acquired t = hold(k, T, 2, LEASE);
                queue(k, W, 1, HEARTBEAT);
                assertThat(checked(k, LIMIT, s + " setup cancel", () -> commands.cancel(k, LIMIT, T, true))
                        .grantedToken()).isEqualTo(t.token());
            }
            case LAPSED -> {
                hold(k, O, 1, LEASE);
                hold(k, H, 2, LEASE);
                queue(k, T, 2, SHORT);
                queue(k, W, 1, HEARTBEAT);
            }
            case EXPIRED_CLAIM -> {
                hold(k, O, 1, LEASE);
                hold(k, H, 2, LEASE);
                queue(k, T, 2, SHORT);
                queue(k, W, 1, HEARTBEAT);
                assertThat(checked(k, LIMIT, s + " setup release H", () -> commands.release(k, LIMIT, H))
                        .released()).isTrue();
            }
        }
        ScriptSnapshot set = ScriptSnapshot.take(redis, k);
        boolean holding = switch (s.kind()) {
            case GRANTED, EXPIRED, CLAIM, EXPIRED_CLAIM -> true;
            default -> false;
        };
        boolean waiting = s.kind() == Kind.QUEUED || s.kind() == Kind.LAPSED;
        assertThat(set.holders().containsKey(T)).as("%s: T holds after set-up: %s", s, set).isEqualTo(holding);
        assertThat(set.queue().containsKey(T)).as("%s: T waits after set-up: %s", s, set).isEqualTo(waiting);
        if (s.kind() == Kind.CLAIM) {
            // A grant from the queue starts with the claim (the heartbeat), not the full lease.
            assertThat(set.holders().get(T) - set.nowMs()).as("%s claim: %s", s, set)
                    .isBetween(HEARTBEAT.toMillis() - 5_000, HEARTBEAT.toMillis());
        }
    }

    /** What the first call on T must answer, given what T was. */
    private void expectFirst(Scenario s, Op op, Object reply, ScriptSnapshot before, ScriptSnapshot after) {
        Kind kind = s.kind();
        long token = kind.holds() ? before.infoOf(T).token() : 0;
        String why = s + ": " + op + " on T; before " + before + "; after " + after;
        switch (op) {
            case ACQUIRE -> {
                Acquired acquired = (Acquired) reply;
                if (kind.holds()) {
                    assertThat(acquired.status()).as(why).isEqualTo(Acquired.Status.GRANTED);
                    assertThat(acquired.token()).as(why).isEqualTo(token);
                    assertFullLease(after, why);
                } else if (kind.waits()) {
                    assertThat(acquired.status()).as(why).isEqualTo(Acquired.Status.QUEUED);
                    assertThat(acquired.token()).as(why).isEqualTo(before.queue().get(T));
                    assertThat(after.queue()).as(why).hasSize(before.queue().size());
                }
                if (kind.holds() || kind.waits()) {
                    assertThat(after.used()).as(why).isEqualTo(before.used());
                }
            }
            case RELEASE -> {
                assertThat(((Released) reply).released()).as(why).isEqualTo(kind.holds());
                assertThat(after.holders()).as(why).doesNotContainKey(T);
                // A waiter is not a holder: release leaves it in the queue.
                assertThat(after.queue().containsKey(T)).as(why).isEqualTo(kind.waits());
            }
            case CANCEL -> {
                assertThat(((Cancelled) reply).grantedToken()).as(why).isEqualTo(token);
                assertThat(after.queue()).as(why).doesNotContainKey(T);
                if (kind.holds()) {
                    assertFullLease(after, why);
                } else {
                    assertThat(after.holders()).as(why).doesNotContainKey(T);
                }
            }
            case CANCEL_RELEASE -> {
                assertThat(((Cancelled) reply).grantedToken()).as(why).isEqualTo(token);
                assertThat(after.holders()).as(why).doesNotContainKey(T);
                assertThat(after.queue()).as(why).doesNotContainKey(T);
            }
            case RENEW -> {
                Renewed renewed = (Renewed) reply;
                long expected = kind.holds() ? token : kind.waits() ? Renewed.WAITING : Renewed.GONE;
                assertThat(renewed.statuses()).as(why).containsExactly(expected);
                assertThat(renewed.renewed()).as(why).isEqualTo(kind.holds() ? 1 : 0);
                if (kind.holds()) {
                    assertFullLease(after, why);
                }
            }
            case STATE -> {
                SemaphoreCommands.State state = (SemaphoreCommands.State) reply;
                assertThat(state.state().holders()).as(why)
                        .filteredOn(holder -> holder.permitId().equals(T)).hasSize(kind.holds() ? 1 : 0);
                assertThat(state.state().waiters()).as(why)
                        .filteredOn(waiter -> waiter.waiterId().equals(T)).hasSize(kind.waits() ? 1 : 0);
                assertThat(state.state().used()).as(why).isEqualTo(after.used());
                assertThat(state.state().holders().stream().mapToInt(SemaphoreState.Holder::count).sum()).as(why)
                        .isEqualTo(after.used());
            }
        }
    }

    private static void assertFullLease(ScriptSnapshot after, String why) {
        assertThat(after.holders()).as(why).containsKey(T);
        assertThat(after.holders().get(T) - after.nowMs()).as("T confirmed to its full lease: " + why)
                .isBetween(LEASE.toMillis() - 5_000, LEASE.toMillis());
    }

    // --- bad arguments ----------------------------------------------------------------------------

    @Test
    void badArgumentsAreErrorRepliesThatWriteNothing() {
        SemaphoreKeys keys = keys("bad-args");
        // Something for every script to do if it got past its checks: an expired lease to purge,
        // a lapsed waiter to drop, a waiter to grant.
        hold(keys, O, 1, LEASE);
        hold(keys, T, 2, SHORT);
        queue(keys, "L", 1, SHORT);
        queue(keys, W, 1, HEARTBEAT);
        awaitServerTime(serverMillis() + SHORT.toMillis() + 5);

        String l = String.valueOf(LIMIT);
        String id = "B";
        String lease = "60000";
        String hb = "30000";
        String tooLong = "x".repeat(201);
        List<String[]> acquires = new ArrayList<>();
        for (String bad : List.of("abc", "0", "-1", "1.5", "1000001", "", " ", "nan", "inf", "1e300")) {
            acquires.add(new String[] {bad, id, "1", lease, "1", "1", hb, INBOX, OWNER});
        }
        for (String bad : List.of("", "has space", "tab\tid", "new\nline", tooLong)) {
            acquires.add(new String[] {l, bad, "1", lease, "1", "1", hb, INBOX, OWNER});
        }
        for (String bad : List.of("0", "-1", "x", "1.5", "4", "")) {
            acquires.add(new String[] {l, id, bad, lease, "1", "1", hb, INBOX, OWNER});
        }
        for (String bad : List.of("0", "-5", "abc", "86400001", "0.5", "")) {
            acquires.add(new String[] {l, id, "1", bad, "1", "1", hb, INBOX, OWNER});
        }
        for (String bad : List.of("0", "x", "86400001", "")) {
            acquires.add(new String[] {l, id, "1", lease, "1", "1", bad, INBOX, OWNER});
        }
        for (String bad : List.of("", "in box")) {
            acquires.add(new String[] {l, id, "1", lease, "1", "1", hb, bad, OWNER});
        }
        acquires.add(new String[] {l, id, "1", lease, "1", "1", hb});
        acquires.add(new String[] {l, id});
        acquires.add(new String[] {l});
        acquires.add(new String[] {});

        List<String[]> releases = List.of(new String[] {"x", T}, new String[] {"0", T}, new String[] {l, ""},
                new String[] {l, "a b"}, new String[] {l, tooLong}, new String[] {l}, new String[] {});
        List<String[]> cancels = List.of(new String[] {"x", W, "1"}, new String[] {"-3", W, "0"},
                new String[] {l, "", "1"}, new String[] {l, " ", "1"}, new String[] {l});
        List<String[]> renews = List.of(new String[] {"x", hb, O, W}, new String[] {"0", hb, O},
                new String[] {l, "0", O, W}, new String[] {l, "x", W}, new String[] {l, "86400001", O},
                new String[] {l, "1.5", O}, new String[] {l});
        List<String[]> states = List.of(new String[] {"x", "10"}, new String[] {l, "0"}, new String[] {l, "x"},
                new String[] {l, "100001"}, new String[] {l, ""}, new String[] {l});

        ScriptSnapshot before = ScriptSnapshot.take(redis, keys);
        assertThat(before.holders()).containsKeys(O, T);
        assertThat(before.queue()).containsKeys("L", W);
        int calls = 0;
        for (String[] args : acquires) {
            expectErrorWritingNothing(keys, "acquire", args, before);
            calls++;
        }
        for (String[] args : releases) {
            expectErrorWritingNothing(keys, "release", args, before);
            calls++;
        }
        for (String[] args : cancels) {
            expectErrorWritingNothing(keys, "cancel", args, before);
            calls++;
        }
        for (String[] args : renews) {
            expectErrorWritingNothing(keys, "renew", args, before);
            calls++;
        }
        for (String[] args : states) {
            expectErrorWritingNothing(keys, "state", args, before);
            calls++;
        }
        assertThat(calls).isGreaterThan(50);

        // A good call does the work that was waiting: T's lease and L's heartbeat end, W is granted.
        SemaphoreCommands.State state = checked(keys, LIMIT, "state", () -> commands.state(keys, LIMIT, 100));
        assertThat(state.state().holders()).extracting(SemaphoreState.Holder::permitId).containsExactlyInAnyOrder(O, W);
        assertThat(state.state().waiters()).isEmpty();
    }

    private void expectErrorWritingNothing(SemaphoreKeys keys, String script, String[] args, ScriptSnapshot before) {
        String call = script + " " + Arrays.toString(args);
        Throwable error = catchThrowable(() -> redis.execute(SemaphoreScripts.script(script), keys.all(),
                (Object[]) args));
        assertThat(error).as("%s must be refused", call).isNotNull();
        assertThat(messages(error)).as("%s: the error reply", call).contains("semaphore script");
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.dumps()).as("%s wrote nothing: before %s, after %s", call, before, after)
                .isEqualTo(before.dumps());
        // Exact with PEXPIRETIME (Redis 7); Redis 6 gives now + PTTL, which may round by a millisecond.
        assertThat(after.expireAt().keySet()).as("%s changed no TTL", call).isEqualTo(before.expireAt().keySet());
        before.expireAt().forEach((key, at) -> assertThat(after.expireAt().get(key))
                .as("%s changed no TTL of %s", call, key).isBetween(at - 2, at + 2));
    }

    private static String messages(Throwable error) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = error; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" | ");
        }
        return all.toString();
    }

    // --- at-least-once resends --------------------------------------------------------------------

    @Test
    void aResentAcquireNeverCountsTwice() throws Exception {
        SemaphoreKeys keys = keys("resend");
        Acquired a = hold(keys, "A", 2, LEASE);
        for (int i = 0; i < 3; i++) {
            Acquired again = checked(keys, LIMIT, "resend A", () -> acquire(keys, LIMIT, "A", 2, LEASE, HEARTBEAT));
            assertThat(again.status()).isEqualTo(Acquired.Status.GRANTED);
            assertThat(again.token()).isEqualTo(a.token());
            assertThat(again.usage().used()).isEqualTo(2);
        }

        Acquired b = queue(keys, "B", 2, HEARTBEAT);
        for (int i = 0; i < 3; i++) {
            Acquired again = checked(keys, LIMIT, "resend B", () -> acquire(keys, LIMIT, "B", 2, LEASE, HEARTBEAT));
            assertThat(again.status()).isEqualTo(Acquired.Status.QUEUED);
            assertThat(again.token()).isEqualTo(b.token());
            assertThat(again.usage().waiters()).isEqualTo(1);
        }

        // B is granted from the queue (a claim); a resend is answered with that grant and confirms it.
        checked(keys, LIMIT, "release A", () -> commands.release(keys, LIMIT, "A"));
        ScriptSnapshot claimed = ScriptSnapshot.take(redis, keys);
        assertThat(claimed.holders()).containsOnlyKeys("B");
        long claimToken = claimed.infoOf("B").token();
        assertThat(claimed.holders().get("B") - claimed.nowMs()).isLessThanOrEqualTo(HEARTBEAT.toMillis());
        Acquired resent = checked(keys, LIMIT, "resend B after grant",
                () -> acquire(keys, LIMIT, "B", 2, LEASE, HEARTBEAT));
        assertThat(resent.status()).isEqualTo(Acquired.Status.GRANTED);
        assertThat(resent.token()).isEqualTo(claimToken);
        ScriptSnapshot confirmed = ScriptSnapshot.take(redis, keys);
        assertThat(confirmed.used()).isEqualTo(2);
        assertThat(confirmed.holders().get("B") - confirmed.nowMs()).isGreaterThan(HEARTBEAT.toMillis());

        // Many copies of one call at once (a client retrying on several connections): counted once.
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<CompletableFuture<Acquired>> copies = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                copies.add(CompletableFuture.supplyAsync(() -> acquire(keys, LIMIT, "C", 1, LEASE, HEARTBEAT), pool));
            }
            List<Long> tokens = new ArrayList<>();
            for (CompletableFuture<Acquired> copy : copies) {
                Acquired reply = copy.get(10, TimeUnit.SECONDS);
                assertThat(reply.status()).isEqualTo(Acquired.Status.GRANTED);
                tokens.add(reply.token());
            }
            assertThat(tokens).containsOnly(tokens.get(0));
        } finally {
            pool.shutdownNow();
        }
        ScriptSnapshot end = ScriptSnapshot.take(redis, keys);
        assertThat(end.violations(LIMIT)).as("%s", end).isEmpty();
        assertThat(end.used()).isEqualTo(3);
        assertThat(end.holders()).containsOnlyKeys("B", "C");
    }

    @Test
    void aRenewKeepsEveryKeyAliveUntilTheLastDeadlineOfTheSemaphoreNotJustItsOwn() {
        // I4: a JVM renewing only a waiter (or an id that is gone) must not bring the expiry of the
        // keys before the 60 s lease of another JVM's holder: once the keys vanish, the permit is
        // free again while its holder still counts on it.
        SemaphoreKeys keys = keys("renew-ttl");
        hold(keys, O, 1, LEASE);
        hold(keys, H, 2, LEASE);
        queue(keys, W, 1, Duration.ofSeconds(5));
        long leaseEnds = ScriptSnapshot.take(redis, keys).holders().get(O);

        Renewed renewed = commands.renew(keys, LIMIT, Duration.ofSeconds(5), List.of(W, U));

        assertThat(renewed.statuses()).containsExactly(Renewed.WAITING, Renewed.GONE);
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.expireAt()).as("expiry of every key vs the lease of O ending at now+%s ms: %s",
                leaseEnds - after.nowMs(), after).allSatisfy((key, at) -> assertThat(at).isGreaterThanOrEqualTo(leaseEnds));
    }

    @Test
    void theEarliestLeaseEndInEveryReplyIsNeverLaterThanTheEarliestDeadline() {
        // A claim (the heartbeat, 30 s) longer than the lease (1 s): confirming it brings the deadline
        // forward, and the reply must not promise a later one (a waiting JVM sleeps until then).
        for (Op confirmation : List.of(Op.ACQUIRE, Op.RENEW, Op.CANCEL)) {
            SemaphoreKeys keys = keys("earliest-" + confirmation.name().toLowerCase());
            hold(keys, O, 1, LEASE);
            hold(keys, H, 2, LEASE);
            Acquired queued = checked(keys, LIMIT, "queue T with a 1 s lease",
                    () -> acquire(keys, LIMIT, T, 2, Duration.ofSeconds(1), HEARTBEAT));
            assertThat(queued.status()).isEqualTo(Acquired.Status.QUEUED);
            checked(keys, LIMIT, "release H", () -> commands.release(keys, LIMIT, H));
            ScriptSnapshot claimed = ScriptSnapshot.take(redis, keys);
            assertThat(claimed.holders()).containsKeys(O, T);
            assertThat(claimed.holders().get(T) - claimed.nowMs()).isGreaterThan(HEARTBEAT.toMillis() - 5_000);

            checked(keys, LIMIT, "confirm T's claim by " + confirmation, () -> call(keys, confirmation, T));

            ScriptSnapshot confirmed = ScriptSnapshot.take(redis, keys);
            assertThat(confirmed.holders().get(T) - confirmed.nowMs()).as("%s", confirmed)
                    .isLessThanOrEqualTo(1_000);
        }
    }

    // --- helpers ----------------------------------------------------------------------------------

    private SemaphoreKeys keys(String what) {
        return SemaphoreKeys.of(PREFIX, what + "-" + names.incrementAndGet());
    }

    private Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, Duration heartbeat) {
        return commands.acquire(keys, limit, id, count, lease, true, true, heartbeat, INBOX, OWNER);
    }

    private Acquired hold(SemaphoreKeys keys, String id, int count, Duration lease) {
        Acquired reply = checked(keys, LIMIT, "hold " + id, () -> acquire(keys, LIMIT, id, count, lease, HEARTBEAT));
        assertThat(reply.status()).as("%s granted", id).isEqualTo(Acquired.Status.GRANTED);
        return reply;
    }

    private Acquired queue(SemaphoreKeys keys, String id, int count, Duration heartbeat) {
        Acquired reply = checked(keys, LIMIT, "queue " + id, () -> acquire(keys, LIMIT, id, count, LEASE, heartbeat));
        assertThat(reply.status()).as("%s queued", id).isEqualTo(Acquired.Status.QUEUED);
        return reply;
    }

    private Object call(SemaphoreKeys keys, Op op, String id) {
        int count = T.equals(id) || H.equals(id) ? 2 : 1;
        return switch (op) {
            case ACQUIRE -> acquire(keys, LIMIT, id, count, LEASE, HEARTBEAT);
            case RELEASE -> commands.release(keys, LIMIT, id);
            case CANCEL -> commands.cancel(keys, LIMIT, id, false);
            case CANCEL_RELEASE -> commands.cancel(keys, LIMIT, id, true);
            case RENEW -> commands.renew(keys, LIMIT, HEARTBEAT, List.of(id));
            case STATE -> commands.state(keys, LIMIT, 100);
        };
    }

    /**
     * Runs one script call, which must not fail, then checks the invariants on the keys and that the
     * usage figures of the reply are those of the keys.
     */
    private <R> R checked(SemaphoreKeys keys, int limit, String step, Supplier<R> call) {
        R reply;
        try {
            reply = call.get();
        } catch (RuntimeException e) {
            throw new AssertionError(step + " failed with " + e + "; keys: " + ScriptSnapshot.take(redis, keys), e);
        }
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.violations(limit)).as("invariants after %s: %s", step, after).isEmpty();
        Usage usage = usage(reply);
        assertThat(usage.used()).as("used in the reply to %s: %s", step, after).isEqualTo(after.used());
        assertThat(usage.waiters()).as("waiters in the reply to %s: %s", step, after).isEqualTo(after.queue().size());
        assertThat(usage.limit()).isEqualTo(limit);
        if (!after.holders().isEmpty()) {
            long earliest = after.holders().values().stream().mapToLong(Long::longValue).min().orElseThrow();
            long replyNow = usage.serverMicros() / 1000;
            assertThat(usage.earliestLeaseEndMillis()).as("earliest lease end in the reply to %s (server time %s): %s",
                    step, replyNow, after).isBetween(0L, Math.max(earliest - replyNow, 0) + 1);
        }
        return reply;
    }

    private static Usage usage(Object reply) {
        if (reply instanceof Acquired r) {
            return r.usage();
        } else if (reply instanceof Released r) {
            return r.usage();
        } else if (reply instanceof Cancelled r) {
            return r.usage();
        } else if (reply instanceof Renewed r) {
            return r.usage();
        } else if (reply instanceof SemaphoreCommands.State r) {
            return r.usage();
        }
        throw new IllegalArgumentException("not a script reply: " + reply);
    }

    private long serverMillis() {
        Long time = redis.execute((RedisCallback<Long>) connection -> connection.serverCommands().time());
        return time == null ? 0 : time;
    }

    /** Waits until the Redis clock (the only clock the scripts use) reads at least {@code millis}. */
    private void awaitServerTime(long millis) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> serverMillis() >= millis);
    }
}
