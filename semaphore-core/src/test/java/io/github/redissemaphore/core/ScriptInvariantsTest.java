package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.CancelScript.Cancelled;
import io.github.redissemaphore.core.internal.redis.LeaseScript.Leased;
import io.github.redissemaphore.core.internal.redis.ReleaseScript.Released;
import io.github.redissemaphore.core.internal.redis.RenewScript.Renewed;
import io.github.redissemaphore.core.internal.redis.Scripts;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.StateScript;
import io.github.redissemaphore.core.internal.redis.Usage;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The scripts on their own, called through {@link RawScripts} (and raw, for bad arguments):
 * whatever id a client sends, in whatever order, no script errors and the data-model invariants of
 * {@code _args.lua} hold after every call, checked by reading the keys ({@link ScriptSnapshot}).
 */
@Tag("redis-compat")
@RedisTest
class ScriptInvariantsTest {

    private static final String OWNER = "test-host/1/main";
    private static final int LIMIT = 3;
    private static final Duration LEASE = Duration.ofSeconds(60);
    /** The waiter heartbeat, hence the claim lease of a grant from the queue. */
    private static final Duration HEARTBEAT = Duration.ofSeconds(30);
    /** Leases and heartbeats meant to run out during the test. */
    private static final Duration SHORT = Duration.ofMillis(500);
    /** The lease an extension sets. */
    private static final Duration EXTENDED = Duration.ofSeconds(45);
    /** The longest lease or heartbeat any call of this class writes. */
    private static final Duration LONGEST = LEASE;
    /** What keys outlive twice the longest lease or heartbeat by ({@code KEY_MARGIN_MS} of {@code _args.lua}). */
    private static final long KEY_MARGIN_MS = 5_000;
    /** Scenarios set up and run together: few enough that none outlives its 30 s heartbeat first. */
    private static final int BATCH = 150;

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
        EXPIRED_CLAIM,
        /** granted directly, then adopted by another JVM */
        ADOPTED,
        /** granted 2 directly, then 1 of them given back */
        PARTIAL;

        boolean holds() {
            return this == GRANTED || this == CLAIM || this == ADOPTED || this == PARTIAL;
        }

        /** @return whether T holds, owned by the JVM of {@code inbox} (the one that calls) */
        boolean owns() {
            return holds() && this != ADOPTED;
        }

        boolean waits() {
            return this == QUEUED;
        }
    }

    /**
     * The script calls, made by the JVM of {@code inbox} unless said otherwise: RELEASE by id (from
     * anywhere), RELEASE_OWN as its permit's release(), RELEASE_PART as release(1) of 2,
     * RELEASE_HANDING_OVER as RedisSemaphore.release(id) (any lease, its owner told), EXTEND to
     * {@link #EXTENDED}, ADOPT by the JVM of {@code otherInbox}; the OVERRIDE ones set the runtime
     * limit to {@link #LOWERED} or {@link #RAISED}, or clear it (I6).
     */
    enum Op {
        ACQUIRE, RELEASE, RELEASE_OWN, RELEASE_PART, RELEASE_HANDING_OVER, CANCEL, CANCEL_RELEASE, RENEW, EXTEND, ADOPT, STATE,
        OVERRIDE_LOWER, OVERRIDE_RAISE, OVERRIDE_CLEAR
    }

    /** The runtime limits the override calls set, below and above {@link #LIMIT}. */
    private static final int LOWERED = 1;
    private static final int RAISED = 5;

    /** One semaphore of its own, its id under test made {@code kind}, then {@code steps} run on it. */
    record Scenario(String label, Kind kind, SemaphoreKeys keys, List<Op> ops, List<String> targets) {
        @Override
        public String toString() {
            return label + "[" + kind + ", " + ops + " on " + targets + "]";
        }
    }

    private RawScripts commands;
    private StringRedisTemplate redis;
    private RedisServer server;
    /** The server's: the scripts are called on no other key. */
    private String prefix;
    /** Nobody listens: grants are published into the void, as for a waiter whose JVM is gone. */
    private String inbox;
    /** The inbox of another JVM, which adopts leases. */
    private String otherInbox;
    private final AtomicInteger names = new AtomicInteger();
    /** Semaphores that had an override at some point. */
    private final Set<String> overridden = new HashSet<>();

    @BeforeEach
    void connect(RedisServer server) {
        this.server = server;
        RedisConnectionFactory factory = server.connectionFactory(RawScripts.TIMEOUT);
        commands = new RawScripts(factory);
        redis = new StringRedisTemplate(factory);
        prefix = server.keyPrefix();
        inbox = prefix + ":inbox:nobody";
        otherInbox = prefix + ":inbox:other";
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
                () -> commands.acquire(keys, 2, "id3", 1, LEASE, false, true, HEARTBEAT, inbox, OWNER));
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

    /**
     * Sets every scenario of a batch up, waits once for the short leases and heartbeats to end,
     * then runs them; clears the overrides they set at the end (a state key with an override set
     * has no TTL).
     */
    private void runAll(List<Scenario> scenarios) {
        for (int from = 0; from < scenarios.size(); from += BATCH) {
            runBatch(scenarios.subList(from, Math.min(from + BATCH, scenarios.size())));
        }
    }

    private void runBatch(List<Scenario> scenarios) {
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
            checked(s.keys(), LIMIT, s + " clear the override", () -> commands.overrideLimit(s.keys(), LIMIT, 0));
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
            case ADOPTED -> {
                hold(k, O, 1, LEASE);
                hold(k, T, 2, LEASE);
                queue(k, W, 1, HEARTBEAT);
                assertThat(checked(k, LIMIT, s + " setup adopt", () -> call(k, Op.ADOPT, T)))
                        .extracting(reply -> ((Leased) reply).status()).isEqualTo(Leased.Status.HELD);
            }
            case PARTIAL -> {
                hold(k, O, 1, LEASE);
                hold(k, T, 2, LEASE);
                queue(k, W, 1, HEARTBEAT);
                assertThat(checked(k, LIMIT, s + " setup release part", () -> call(k, Op.RELEASE_PART, T)))
                        .extracting(reply -> ((Released) reply).left()).isEqualTo(1);
            }
        }
        ScriptSnapshot set = ScriptSnapshot.take(redis, k);
        boolean holding = switch (s.kind()) {
            case GRANTED, EXPIRED, CLAIM, EXPIRED_CLAIM, ADOPTED, PARTIAL -> true;
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
            case RELEASE, RELEASE_HANDING_OVER -> {
                assertThat(((Released) reply).released()).as(why).isEqualTo(kind.holds());
                assertThat(((Released) reply).ownedElsewhere()).as(why).isFalse();
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
                long expected = kind.owns() ? token : kind.holds() ? Renewed.ADOPTED
                        : kind.waits() ? Renewed.WAITING : Renewed.GONE;
                assertThat(renewed.statuses()).as(why).containsExactly(expected);
                assertThat(renewed.leases()).as(why).containsExactly(kind.owns() ? LEASE : Duration.ZERO);
                assertThat(renewed.renewed()).as(why).isEqualTo(kind.owns() ? 1 : 0);
                if (kind.owns()) {
                    assertFullLease(after, why);
                } else if (kind.holds()) {
                    assertUntouched(before, after, why);
                }
            }
            case RELEASE_OWN, RELEASE_PART -> {
                Released released = (Released) reply;
                int left = kind == Kind.ADOPTED ? 2 : kind.owns() && op == Op.RELEASE_PART ? 1 : 0;
                assertThat(released.released()).as(why).isEqualTo(kind.owns());
                assertThat(released.ownedElsewhere()).as(why).isEqualTo(kind == Kind.ADOPTED);
                assertThat(released.left()).as(why).isEqualTo(left);
                assertThat(after.holders().containsKey(T)).as(why).isEqualTo(left > 0);
                assertThat(after.queue().containsKey(T)).as(why).isEqualTo(kind.waits());
                if (kind == Kind.ADOPTED) {
                    assertUntouched(before, after, why);
                } else if (left > 0) {
                    // A part given back: same id, token and deadline, one permit fewer.
                    assertThat(after.infoOf(T).count()).as(why).isEqualTo(1);
                    assertThat(after.infoOf(T).token()).as(why).isEqualTo(token);
                    assertThat(after.holders().get(T)).as(why).isEqualTo(before.holders().get(T));
                }
            }
            case EXTEND -> {
                Leased leased = (Leased) reply;
                Leased.Status expected = kind.owns() ? Leased.Status.HELD
                        : kind.holds() ? Leased.Status.OWNED_ELSEWHERE : Leased.Status.GONE;
                assertThat(leased.status()).as(why).isEqualTo(expected);
                if (kind.owns()) {
                    assertThat(leased.token()).as(why).isEqualTo(token);
                    assertThat(leased.lease()).as(why).isEqualTo(EXTENDED);
                    assertThat(after.infoOf(T).lease()).as(why).isEqualTo(EXTENDED.toMillis());
                    assertThat(after.holders().get(T) - after.nowMs()).as(why)
                            .isBetween(EXTENDED.toMillis() - 5_000, EXTENDED.toMillis());
                } else if (kind.holds()) {
                    assertUntouched(before, after, why);
                } else {
                    assertThat(after.holders()).as(why).doesNotContainKey(T);
                }
            }
            case ADOPT -> {
                Leased leased = (Leased) reply;
                assertThat(leased.status()).as(why).isEqualTo(kind.holds() ? Leased.Status.HELD : Leased.Status.GONE);
                if (kind.holds()) {
                    assertThat(leased.token()).as(why).isEqualTo(token);
                    assertThat(leased.count()).as(why).isEqualTo(before.infoOf(T).count());
                    assertThat(leased.lease()).as(why).isEqualTo(LEASE);
                    assertThat(after.infoOf(T).inbox()).as(why).isEqualTo(otherInbox);
                    assertFullLease(after, why);
                } else {
                    assertThat(after.holders()).as(why).doesNotContainKey(T);
                    assertThat(after.queue().containsKey(T)).as(why).isEqualTo(kind.waits());
                }
            }
            case OVERRIDE_LOWER, OVERRIDE_RAISE, OVERRIDE_CLEAR -> {
                // I6: a new limit never takes a permit from its holder, nor a part of it; a waiter
                // that no longer fits the lowered limit (T asks for 2) is told so; a raise serves the
                // head (used 3 + 2 <= 5).
                if (kind.holds()) {
                    assertUntouched(before, after, why);
                }
                boolean holds = kind.holds() || kind.waits() && op == Op.OVERRIDE_RAISE;
                boolean waits = kind.waits() && op == Op.OVERRIDE_CLEAR;
                assertThat(after.holders().containsKey(T)).as(why).isEqualTo(holds);
                assertThat(after.queue().containsKey(T)).as(why).isEqualTo(waits);
                assertThat(after.override()).as(why).isEqualTo(switch (op) {
                    case OVERRIDE_LOWER -> LOWERED;
                    case OVERRIDE_RAISE -> RAISED;
                    default -> null;
                });
            }
            case STATE -> {
                StateScript.Read state = (StateScript.Read) reply;
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

    /** T's lease is as it was: same deadline, same record. */
    private static void assertUntouched(ScriptSnapshot before, ScriptSnapshot after, String why) {
        assertThat(after.holders().get(T)).as(why).isEqualTo(before.holders().get(T));
        assertThat(after.info().get(T)).as(why).isEqualTo(before.info().get(T));
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
        List<String[]> acquires = badAcquires(l, id, lease, hb);
        List<String[]> releases = List.of(new String[] {"x", T}, new String[] {"0", T}, new String[] {l, ""},
                new String[] {l, "a b"}, new String[] {l, tooLong}, new String[] {l}, new String[] {},
                new String[] {l, T, "x"}, new String[] {l, T, "-1"}, new String[] {l, T, "1.5"},
                new String[] {l, T, "1000001"}, new String[] {l, T, ""}, new String[] {l, T, "0", ""},
                new String[] {l, T, "0", "in box"}, new String[] {l, T, "0", inbox, "2"},
                new String[] {l, T, "0", inbox, "-1"}, new String[] {l, T, "0", inbox, "x"},
                new String[] {l, T, "0", inbox, "0.5"}, new String[] {l, T, "0", inbox, ""},
                new String[] {l, T, "0", "", "1"}, new String[] {l, T, "0", "in box", "1"});
        List<String[]> cancels = List.of(new String[] {"x", W, "1"}, new String[] {"-3", W, "0"},
                new String[] {l, "", "1"}, new String[] {l, " ", "1"}, new String[] {l});
        List<String[]> renews = List.of(new String[] {"x", hb, inbox, O, W}, new String[] {"0", hb, inbox, O},
                new String[] {l, "0", inbox, O, W}, new String[] {l, "x", inbox, W},
                new String[] {l, "86400001", inbox, O}, new String[] {l, "1.5", inbox, O}, new String[] {l},
                new String[] {l, hb}, new String[] {l, hb, "", O}, new String[] {l, hb, "in box", O},
                // The sweep's form, "<heartbeat ms> <watermark us> <spared ids>": heartbeat out of
                // range, more spared than ids sent, malformed text.
                new String[] {l, "0 1 0", inbox, O}, new String[] {l, "86400001 1 0", inbox, O},
                new String[] {l, "99999999999999999999 1 0", inbox, O}, new String[] {l, hb + " 1 2", inbox, O},
                new String[] {l, hb + " 1 1", inbox}, new String[] {l, hb + " 1 99999999999999999999", inbox, O},
                new String[] {l, hb + " 1", inbox, O}, new String[] {l, hb + " 1 0 0", inbox, O},
                new String[] {l, hb + " 1 0 ", inbox, O}, new String[] {l, " " + hb + " 1 0", inbox, O},
                new String[] {l, hb + "  1 0", inbox, O}, new String[] {l, hb + " -1 0", inbox, O},
                new String[] {l, hb + " 1.5 0", inbox, O}, new String[] {l, hb + " x 0", inbox, O},
                new String[] {l, hb + " 1 -1", inbox, O}, new String[] {l, hb + " 1 x", inbox, O},
                new String[] {l, "-5 1 0", inbox, O}, new String[] {l, hb + "\t1\t0", inbox, O},
                new String[] {l, hb + " 1 0", "", O}, new String[] {l, hb + " 1 1", "in box", O});
        List<String[]> leases = List.of(new String[] {"x", O, "0", inbox, "1", OWNER},
                new String[] {l, "", "0", inbox, "1", OWNER}, new String[] {l, "a b", "0", inbox, "1", OWNER},
                new String[] {l, O, "-1", inbox, "0", ""}, new String[] {l, O, "86400001", inbox, "0", ""},
                new String[] {l, O, "x", inbox, "0", ""}, new String[] {l, O, "1.5", inbox, "0", ""},
                new String[] {l, O, "0", "", "1", OWNER}, new String[] {l, O, "0", "in box", "1", OWNER},
                new String[] {l, O, "0"}, new String[] {l, O}, new String[] {l}, new String[] {});
        List<String[]> overrides = List.of(new String[] {"x", "2"}, new String[] {"0", "2"}, new String[] {l, "-1"},
                new String[] {l, "1000001"}, new String[] {l, "1.5"}, new String[] {l, "x"}, new String[] {l, ""},
                new String[] {l, "1e300"}, new String[] {l});
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
        for (String[] args : leases) {
            expectErrorWritingNothing(keys, "lease", args, before);
            calls++;
        }
        for (String[] args : overrides) {
            expectErrorWritingNothing(keys, "override", args, before);
            calls++;
        }
        assertThat(calls).isGreaterThan(110);

        // A good call does the work that was waiting: T's lease and L's heartbeat end, W is granted.
        StateScript.Read state = checked(keys, LIMIT, "state", () -> commands.state(keys, LIMIT, 100));
        assertThat(state.state().holders()).extracting(SemaphoreState.Holder::permitId).containsExactlyInAnyOrder(O, W);
        assertThat(state.state().waiters()).isEmpty();
    }

    @Test
    void badArgumentsOfTheUsualCaseAreErrorRepliesThatWriteNothing() {
        // acquire.lua's fast path: a holder, nobody waiting, nothing to purge; every bad argument
        // must still be an error that writes nothing, not a grant.
        SemaphoreKeys keys = keys("bad-args-usual");
        hold(keys, O, 1, LEASE);
        ScriptSnapshot before = ScriptSnapshot.take(redis, keys);
        String l = String.valueOf(LIMIT);
        List<String[]> acquires = badAcquires(l, "B", String.valueOf(LEASE.toMillis()),
                String.valueOf(HEARTBEAT.toMillis()));
        for (String[] args : acquires) {
            expectErrorWritingNothing(keys, "acquire", args, before);
        }
        // The same call with good arguments is granted, by the fast path.
        Acquired good = checked(keys, LIMIT, "good B", () -> acquire(keys, LIMIT, "B", 1, LEASE, HEARTBEAT));
        assertThat(good.status()).isEqualTo(Acquired.Status.GRANTED);
    }

    /**
     * Acquire calls each with one bad argument (acquire.lua packs count, lease and heartbeat in
     * ARGV 3, the inbox and owner in ARGV 4, the mode in ARGV 5), and calls missing arguments.
     */
    private List<String[]> badAcquires(String l, String id, String lease, String hb) {
        String counts = "1 " + lease + " " + hb;
        String box = inbox + " " + OWNER;
        List<String[]> acquires = new ArrayList<>();
        for (String bad : List.of("abc", "0", "-1", "1.5", "1000001", "", " ", "nan", "inf", "1e300")) {
            acquires.add(new String[] {bad, id, counts, box, "3"});
        }
        for (String bad : List.of("", "has space", "tab\tid", "new\nline", "x".repeat(201))) {
            acquires.add(new String[] {l, bad, counts, box, "3"});
        }
        for (String bad : List.of("0", "-1", "x", "1.5", "4", "")) {
            acquires.add(new String[] {l, id, bad + " " + lease + " " + hb, box, "3"});
        }
        for (String bad : List.of("0", "-5", "abc", "86400001", "0.5", "")) {
            acquires.add(new String[] {l, id, "1 " + bad + " " + hb, box, "3"});
        }
        for (String bad : List.of("0", "x", "86400001", "")) {
            acquires.add(new String[] {l, id, "1 " + lease + " " + bad, box, "3"});
        }
        for (String bad : List.of("", "1 " + lease, "1  " + lease + " " + hb, counts + " ", " " + counts,
                "1\t" + lease + " " + hb, "99999999999999999999 " + lease + " " + hb)) {
            acquires.add(new String[] {l, id, bad, box, "3"});
        }
        for (String bad : List.of("", inbox, " " + OWNER, "in\tbox " + OWNER, "x".repeat(201) + " " + OWNER)) {
            acquires.add(new String[] {l, id, counts, bad, "3"});
        }
        for (String bad : List.of("", "5", "-1", "x", "11", " 1")) {
            acquires.add(new String[] {l, id, counts, box, bad});
        }
        acquires.add(new String[] {l, id, counts, box});
        acquires.add(new String[] {l, id, counts});
        acquires.add(new String[] {l, id});
        acquires.add(new String[] {l});
        acquires.add(new String[] {});
        return acquires;
    }

    private void expectErrorWritingNothing(SemaphoreKeys keys, String script, String[] args, ScriptSnapshot before) {
        String call = script + " " + Arrays.toString(args);
        Throwable error = catchThrowable(() -> redis.execute(Scripts.load(script), keys.all(),
                (Object[]) args));
        assertThat(error).as("%s must be refused", call).isNotNull();
        assertThat(messages(error)).as("%s: the error reply", call).contains("semaphore script");
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.dumps()).as("%s wrote nothing: before %s, after %s", call, before, after)
                .isEqualTo(before.dumps());
        assertThat(after.expireAt().keySet()).as("%s changed no TTL", call).isEqualTo(before.expireAt().keySet());
        before.expireAt().forEach((key, at) -> assertThat(after.expireAt().get(key))
                .as("%s changed no TTL of %s", call, key).isCloseTo(at, within(ScriptSnapshot.EXPIRY_PRECISION_MS)));
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

        Renewed renewed = commands.renew(keys, LIMIT, Duration.ofSeconds(5), inbox, List.of(W, U));

        assertThat(renewed.statuses()).containsExactly(Renewed.WAITING, Renewed.GONE);
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.expireAt()).as("expiry of every key vs the lease of O ending at now+%s ms: %s",
                leaseEnds - after.nowMs(), after)
                .allSatisfy((key, at) -> assertThat(at).isGreaterThanOrEqualTo(leaseEnds));
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

    // --- leases that move, change length, shrink --------------------------------------------------

    @Test
    void aRenewExtendsEachLeaseByItsOwnLengthAndOnlyThoseOfTheCallingJvm() {
        SemaphoreKeys keys = keys("own-lengths");
        Acquired a = hold(keys, "A", 1, Duration.ofSeconds(10));
        hold(keys, "B", 1, LEASE);
        hold(keys, "C", 1, LEASE);
        Leased extended = checked(keys, LIMIT, "extend A",
                () -> commands.extend(keys, LIMIT, "A", Duration.ofSeconds(20), inbox));
        assertThat(extended.status()).isEqualTo(Leased.Status.HELD);
        Leased adopted = (Leased) checked(keys, LIMIT, "adopt C", () -> call(keys, Op.ADOPT, "C"));
        assertThat(adopted.status()).isEqualTo(Leased.Status.HELD);
        long cEnds = ScriptSnapshot.take(redis, keys).holders().get("C");

        Renewed renewed = checked(keys, LIMIT, "renew A B C", () -> commands.renew(keys, LIMIT, HEARTBEAT, inbox,
                List.of("A", "B", "C")));

        assertThat(renewed.statuses()).containsExactly(a.token(), renewed.statuses().get(1), Renewed.ADOPTED);
        assertThat(renewed.leases()).containsExactly(Duration.ofSeconds(20), LEASE, Duration.ZERO);
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.holders().get("A") - after.nowMs()).isBetween(15_000L, 20_000L);
        assertThat(after.holders().get("B") - after.nowMs()).isBetween(LEASE.toMillis() - 5_000, LEASE.toMillis());
        assertThat(after.holders().get("C")).as("another JVM's lease is not renewed").isEqualTo(cEnds);
    }

    @Test
    void partsGivenBackAddUpAResentPartGivesBackOnceAndTheFreedPermitsGoToTheQueue() {
        SemaphoreKeys keys = keys("parts");
        Acquired a = hold(keys, "A", 3, LEASE);
        queue(keys, W, 1, HEARTBEAT);
        long deadline = ScriptSnapshot.take(redis, keys).holders().get("A");

        for (int i = 0; i < 3; i++) {
            // the first gives one back, which goes to W; the copies change nothing
            Released part = checked(keys, LIMIT, "A keeps 2", () -> commands.release(keys, LIMIT, "A", 2, inbox));
            assertThat(part.released()).isTrue();
            assertThat(part.left()).isEqualTo(2);
            assertThat(part.usage().used()).isEqualTo(3);
            assertThat(part.usage().waiters()).isZero();
        }
        Released smaller = checked(keys, LIMIT, "A keeps 1", () -> commands.release(keys, LIMIT, "A", 1, inbox));
        Released larger = checked(keys, LIMIT, "A keeps 2, late", () -> commands.release(keys, LIMIT, "A", 2, inbox));
        assertThat(smaller.left()).isEqualTo(1);
        assertThat(larger.left()).as("keeping at most 2 of 1").isEqualTo(1);

        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.used()).isEqualTo(2);
        assertThat(after.holders()).containsOnlyKeys("A", W);
        assertThat(after.infoOf("A").token()).isEqualTo(a.token());
        assertThat(after.holders().get("A")).isEqualTo(deadline);
        Released rest = checked(keys, LIMIT, "A keeps 0", () -> commands.release(keys, LIMIT, "A", 0, inbox));
        assertThat(rest.released()).isTrue();
        assertThat(rest.left()).isZero();
        assertThat(ScriptSnapshot.take(redis, keys).holders()).containsOnlyKeys(W);
    }

    @Test
    void anAdoptedLeaseIsItsNewOwnersAndStillReleasableById() {
        SemaphoreKeys keys = keys("adopted");
        Acquired a = hold(keys, "A", 2, LEASE);
        Leased adopted = (Leased) checked(keys, LIMIT, "adopt A", () -> call(keys, Op.ADOPT, "A"));
        assertThat(adopted).extracting(Leased::status, Leased::count, Leased::token, Leased::lease)
                .containsExactly(Leased.Status.HELD, 2, a.token(), LEASE);
        assertThat(ScriptSnapshot.take(redis, keys).infoOf("A").owner()).isEqualTo("other-host/2/worker");

        // The former owner can neither renew, extend, nor release it...
        assertThat(checked(keys, LIMIT, "renew by the former owner", () -> call(keys, Op.RENEW, "A")))
                .extracting(reply -> ((Renewed) reply).statuses()).isEqualTo(List.of(Renewed.ADOPTED));
        assertThat(checked(keys, LIMIT, "extend by the former owner", () -> call(keys, Op.EXTEND, "A")))
                .extracting(reply -> ((Leased) reply).status()).isEqualTo(Leased.Status.OWNED_ELSEWHERE);
        assertThat(checked(keys, LIMIT, "release by the former owner", () -> call(keys, Op.RELEASE_OWN, "A")))
                .extracting(reply -> ((Released) reply).ownedElsewhere()).isEqualTo(true);
        // ...the new one can...
        Renewed renewed = checked(keys, LIMIT, "renew by the adopter", () -> commands.renew(keys, LIMIT, HEARTBEAT,
                otherInbox, List.of("A")));
        assertThat(renewed.statuses()).containsExactly(a.token());
        // ...and so can anybody by id.
        assertThat(checked(keys, LIMIT, "release by id", () -> call(keys, Op.RELEASE, "A")))
                .extracting(reply -> ((Released) reply).released()).isEqualTo(true);
        assertThat(checked(keys, LIMIT, "adopt a released lease", () -> call(keys, Op.ADOPT, "A")))
                .extracting(reply -> ((Leased) reply).status()).isEqualTo(Leased.Status.GONE);
    }

    @Test
    void aReleaseHandingOverTellsTheFormerOwnerOnItsInboxAndOnlyIt() {
        SemaphoreKeys keys = keys("handed-over");
        try (InboxListener owner = new InboxListener()) {
            Acquired a = checked(keys, LIMIT, "A held by the listened JVM", () -> commands.acquire(keys, LIMIT, "A", 2,
                    LEASE, false, true, HEARTBEAT, owner.channel, OWNER));
            assertThat(a.status()).isEqualTo(Acquired.Status.GRANTED);
            Acquired b = checked(keys, LIMIT, "B held by the listened JVM", () -> commands.acquire(keys, LIMIT, "B", 1,
                    LEASE, false, true, HEARTBEAT, owner.channel, OWNER));
            queue(keys, W, 2, HEARTBEAT);

            // Another JVM releases A by id: released, the waiter served, the owner told once.
            Released released = checked(keys, LIMIT, "A released by another JVM",
                    () -> commands.releaseHandingOver(keys, LIMIT, "A", otherInbox));
            assertThat(released.released()).isTrue();
            assertThat(released.ownedElsewhere()).isFalse();
            ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
            assertThat(after.holders()).containsOnlyKeys("B", W);
            // Again: it holds nothing now, and nobody is told anything.
            assertThat(checked(keys, LIMIT, "A again", () -> commands.releaseHandingOver(keys, LIMIT, "A", otherInbox))
                    .released()).isFalse();
            // Its own JVM releases B by id: no hand-over to tell of.
            assertThat(checked(keys, LIMIT, "B by its own JVM",
                    () -> commands.releaseHandingOver(keys, LIMIT, "B", owner.channel)).released()).isTrue();
            owner.awaitHeard("A -" + released.usage().serverMicros());
            assertThat(a.token()).isPositive();
            assertThat(b.token()).isGreaterThan(a.token());
        }
    }

    // --- runtime limits (I6) ----------------------------------------------------------------------

    @Test
    void aLoweredLimitTakesNoPermitBackAndGrantsInQueueOrderOnceTheHeldPermitsFit() {
        SemaphoreKeys keys = keys("lowered");
        hold(keys, "A", 1, LEASE);
        hold(keys, "B", 1, LEASE);
        hold(keys, "C", 1, LEASE);
        queue(keys, "W1", 1, HEARTBEAT);
        queue(keys, "W2", 1, HEARTBEAT);

        Usage lowered = checked(keys, LIMIT, "override 1", () -> commands.overrideLimit(keys, LIMIT, 1));
        assertThat(lowered.limit()).isEqualTo(1);
        assertThat(lowered.override()).isEqualTo(1);
        assertThat(lowered.used()).isEqualTo(3);
        assertThat(lowered.available()).isZero();

        // Nobody is granted until used + 1 <= 1: not after the first release, nor the second.
        for (String holder : List.of("A", "B")) {
            checked(keys, LIMIT, "release " + holder, () -> commands.release(keys, LIMIT, holder));
            assertThat(ScriptSnapshot.take(redis, keys).queue()).containsOnlyKeys("W1", "W2");
        }
        // A caller configured with 3 that does not wait is refused, although 3 - 1 permits look free to it.
        Acquired refused = checked(keys, LIMIT, "acquire X without waiting",
                () -> commands.acquire(keys, LIMIT, "X", 1, LEASE, false, false, HEARTBEAT, inbox, OWNER));
        assertThat(refused.status()).isEqualTo(Acquired.Status.REFUSED);

        checked(keys, LIMIT, "release C", () -> commands.release(keys, LIMIT, "C"));
        ScriptSnapshot first = ScriptSnapshot.take(redis, keys);
        assertThat(first.holders()).containsOnlyKeys("W1");
        assertThat(first.queue()).containsOnlyKeys("W2");

        checked(keys, LIMIT, "release W1", () -> commands.release(keys, LIMIT, "W1"));
        ScriptSnapshot second = ScriptSnapshot.take(redis, keys);
        assertThat(second.holders()).containsOnlyKeys("W2");
        assertThat(second.queue()).isEmpty();
    }

    @Test
    void aRaisedLimitServesTheQueueAtOnceInTicketOrderAndPublishesTheGrants() {
        SemaphoreKeys keys = keys("raised");
        try (InboxListener inbox = new InboxListener()) {
            hold(keys, "A", 3, LEASE);
            for (String[] waiter : new String[][] {{"W1", "1"}, {"W2", "1"}, {"W3", "2"}, {"W4", "1"}}) {
                Acquired queued = checked(keys, LIMIT, "queue " + waiter[0], () -> commands.acquire(keys, LIMIT,
                        waiter[0], Integer.parseInt(waiter[1]), LEASE, true, true, HEARTBEAT, inbox.channel, OWNER));
                assertThat(queued.status()).isEqualTo(Acquired.Status.QUEUED);
            }

            // 3 held, limit 6: W1 and W2 fit (5), W3 (2 more) does not, and W4 behind it must not overtake.
            Usage raised = checked(keys, LIMIT, "override 6", () -> commands.overrideLimit(keys, LIMIT, 6));

            assertThat(raised.used()).isEqualTo(5);
            assertThat(raised.waiters()).isEqualTo(2);
            ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
            assertThat(after.holders()).containsOnlyKeys("A", "W1", "W2");
            assertThat(after.queue()).containsOnlyKeys("W3", "W4");
            inbox.awaitHeard("W1 " + after.infoOf("W1").token(), "W2 " + after.infoOf("W2").token());
        }
    }

    @Test
    void clearingTheLimitBringsBackTheCallersOwnAndServesTheQueueUnderIt() {
        SemaphoreKeys keys = keys("cleared");
        hold(keys, "A", 1, LEASE);
        checked(keys, LIMIT, "override 1", () -> commands.overrideLimit(keys, LIMIT, 1));
        queue(keys, "W1", 1, HEARTBEAT);
        queue(keys, "W2", 1, HEARTBEAT);
        queue(keys, "W3", 1, HEARTBEAT);

        Usage cleared = checked(keys, LIMIT, "clear", () -> commands.overrideLimit(keys, LIMIT, 0));

        assertThat(cleared.override()).isZero();
        assertThat(cleared.limit()).isEqualTo(LIMIT);
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.holders()).containsOnlyKeys("A", "W1", "W2");
        assertThat(after.queue()).containsOnlyKeys("W3");
        assertThat(after.override()).isNull();
        // Clearing twice is harmless.
        checked(keys, LIMIT, "clear again", () -> commands.overrideLimit(keys, LIMIT, 0));
    }

    @Test
    void aRequestAboveTheLimitIsRefusedAtOnceAndAWaiterAboveALoweredLimitIsToldItCannotBeServed() {
        SemaphoreKeys keys = keys("above");
        try (InboxListener inbox = new InboxListener()) {
            hold(keys, "A", 3, LEASE);
            for (String[] waiter : new String[][] {{"BIG", "3"}, {"Q", "1"}, {"BIG2", "3"}}) {
                checked(keys, LIMIT, "queue " + waiter[0], () -> commands.acquire(keys, LIMIT, waiter[0],
                        Integer.parseInt(waiter[1]), LEASE, true, true, HEARTBEAT, inbox.channel, OWNER));
            }

            checked(keys, LIMIT, "override 2", () -> commands.overrideLimit(keys, LIMIT, 2));

            // The head asks for more than the new limit: it leaves the queue and hears token 0.
            inbox.awaitHeard("BIG 0");
            assertThat(ScriptSnapshot.take(redis, keys).queue()).containsOnlyKeys("Q", "BIG2");
            // A resent call of a waiter above the limit, and a new one, are refused at once.
            for (String id : List.of("BIG2", "NEW")) {
                Acquired refused = checked(keys, LIMIT, "acquire " + id + " (3 > 2)", () -> commands.acquire(keys,
                        LIMIT, id, 3, LEASE, true, true, HEARTBEAT, inbox.channel, OWNER));
                assertThat(refused.status()).isEqualTo(Acquired.Status.REFUSED);
            }
            ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
            assertThat(after.queue()).containsOnlyKeys("Q");
            assertThat(after.info()).containsOnlyKeys("A", "Q");
        }
    }

    @Test
    void anOverrideOutlivesTheIdleSemaphoresKeysAndClearingItGivesTheStateKeyItsTtlBack() {
        SemaphoreKeys keys = keys("idle");
        hold(keys, "A", 2, SHORT);
        checked(keys, LIMIT, "override 1", () -> commands.overrideLimit(keys, LIMIT, 1));
        ScriptSnapshot set = ScriptSnapshot.take(redis, keys);
        assertThat(set.expireAt().get(keys.all().get(1))).as("state TTL: %s", set).isEqualTo(-1);

        // The lease ends unreleased and the other keys expire with it (2 x lease + 5 s); the state
        // key stays, with counters that describe keys that are gone.
        awaitServerTime(set.expireAt().get(keys.all().get(0)) + ScriptSnapshot.EXPIRY_PRECISION_MS);
        ScriptSnapshot idle = ScriptSnapshot.take(redis, keys);
        assertThat(idle.holders()).isEmpty();
        assertThat(idle.override()).isEqualTo(1);
        assertThat(idle.used()).as("the stale counter").isEqualTo(2);

        // The next call of a JVM configured with 3 follows the override, from counters rebuilt from the keys.
        Acquired first = checked(keys, LIMIT, "acquire B", () -> acquire(keys, LIMIT, "B", 1, LEASE, HEARTBEAT));
        assertThat(first.status()).isEqualTo(Acquired.Status.GRANTED);
        assertThat(first.usage().used()).isEqualTo(1);
        Acquired second = checked(keys, LIMIT, "acquire C", () -> commands.acquire(keys, LIMIT, "C", 1, LEASE, false,
                true, HEARTBEAT, inbox, OWNER));
        assertThat(second.status()).isEqualTo(Acquired.Status.REFUSED);

        checked(keys, LIMIT, "clear", () -> commands.overrideLimit(keys, LIMIT, 0));
        ScriptSnapshot cleared = ScriptSnapshot.take(redis, keys);
        assertThat(cleared.expireAt().get(keys.all().get(1))).as("state TTL: %s", cleared)
                .isCloseTo(cleared.expireAt().get(keys.all().get(0)), within(ScriptSnapshot.EXPIRY_PRECISION_MS));
    }

    /**
     * "When the keys go" of docs/how-it-works.md: every key is gone at the latest 2 x L + 5 s after
     * the last call, L the longest lease or waiter heartbeat of the calls; with a 2 s lease and a
     * 5 s heartbeat that is 15 s, as the waiters' heartbeats count too. A call that writes no
     * deadline, on a semaphore with no keys, gives the key it creates 5 s. {@link #checked} checks
     * the bound, with this class's longest lease, after every other call.
     */
    @Test
    void anIdleSemaphoresKeysGoWithinTwiceTheLongestLeaseOrHeartbeatPlus5sOfItsLastCall() {
        Duration lease = Duration.ofSeconds(2);
        Duration heartbeat = Duration.ofSeconds(5);
        SemaphoreKeys keys = keys("idle-bound");
        assertThat(checked(keys, 1, "acquire A", () -> acquire(keys, 1, "A", 1, lease, heartbeat)).status())
                .isEqualTo(Acquired.Status.GRANTED);
        assertThat(checked(keys, 1, "queue W", () -> acquire(keys, 1, "W", 1, lease, heartbeat)).status())
                .isEqualTo(Acquired.Status.QUEUED);
        for (int tick = 0; tick < 3; tick++) { // the ticks of the JVMs of the holder and of the waiter
            checked(keys, 1, "renew A", () -> commands.renew(keys, 1, heartbeat, inbox, List.of("A")));
            checked(keys, 1, "renew W", () -> commands.renew(keys, 1, heartbeat, inbox, List.of(W)));
        }
        checked(keys, 1, "cancel W", () -> commands.cancel(keys, 1, W, true));
        Released last = checked(keys, 1, "release A", () -> commands.release(keys, 1, "A"));

        long lastCall = last.usage().serverMicros() / 1000;
        long bound = lastCall + 2 * heartbeat.toMillis() + KEY_MARGIN_MS + ScriptSnapshot.EXPIRY_PRECISION_MS;
        ScriptSnapshot idle = ScriptSnapshot.take(redis, keys);
        assertThat(idle.holders()).isEmpty();
        assertThat(idle.queue()).isEmpty();
        assertThat(idle.expireAt()).as("expiry of every key vs the last call at %s (bound %s): %s", lastCall, bound,
                        idle)
                .allSatisfy((key, at) -> assertThat(at).satisfiesAnyOf(
                        gone -> assertThat(gone).isEqualTo(-2),
                        expires -> assertThat(expires).isBetween(0L, bound)));

        SemaphoreKeys unused = keys("idle-read");
        StateScript.Read read = checked(unused, 1, "state", () -> commands.state(unused, 1, 10));
        long readAt = read.usage().serverMicros() / 1000;
        ScriptSnapshot afterRead = ScriptSnapshot.take(redis, unused);
        assertThat(afterRead.expireAt()).as("expiry of every key after a read at %s: %s", readAt, afterRead)
                .allSatisfy((key, at) -> assertThat(at).satisfiesAnyOf(
                        gone -> assertThat(gone).isEqualTo(-2),
                        expires -> assertThat(expires).isBetween(0L,
                                readAt + KEY_MARGIN_MS + ScriptSnapshot.EXPIRY_PRECISION_MS)));
    }

    @Test
    void everyReplyCarriesTheConfiguredLimitOfThePreviousCallAndTheOverride() {
        SemaphoreKeys keys = keys("mismatch");
        Usage fresh = checked(keys, 2, "state by a JVM configured with 2", () -> commands.state(keys, 2, 10)).usage();
        assertThat(fresh.previousConfiguredLimit()).isZero();
        assertThat(checked(keys, 4, "state by one with 4", () -> commands.state(keys, 4, 10)).usage()
                .previousConfiguredLimit()).isEqualTo(2);
        assertThat(checked(keys, 4, "again with 4", () -> commands.state(keys, 4, 10)).usage()
                .previousConfiguredLimit()).isEqualTo(4);
        Usage back = checked(keys, 2, "with 2", () -> commands.state(keys, 2, 10)).usage();
        assertThat(back.previousConfiguredLimit()).isEqualTo(4);
        assertThat(back.limit()).isEqualTo(2);
        assertThat(back.overridden()).isFalse();

        Usage overridden = checked(keys, 4, "override 3 by one with 4", () -> commands.overrideLimit(keys, 4, 3));
        assertThat(overridden.overridden()).isTrue();
        assertThat(overridden.limit()).isEqualTo(3);
        Usage seen = checked(keys, 2, "with 2", () -> commands.state(keys, 2, 10)).usage();
        assertThat(seen.limit()).isEqualTo(3);
        assertThat(seen.override()).isEqualTo(3);
        checked(keys, 2, "clear", () -> commands.overrideLimit(keys, 2, 0));
    }

    @Test
    void aLoweredLimitTakesNoPartOfALeaseThatIsGivenBackInPartsExtendedOrAdopted() {
        SemaphoreKeys keys = keys("lowered-parts");
        Acquired a = hold(keys, "A", 3, LEASE);
        queue(keys, W, 1, HEARTBEAT);
        checked(keys, LIMIT, "override 1", () -> commands.overrideLimit(keys, LIMIT, 1));

        // Extended and adopted under the lowered limit: still 3 permits, the same token, nobody granted.
        Leased extended = checked(keys, LIMIT, "extend A", () -> commands.extend(keys, LIMIT, "A", EXTENDED, inbox));
        assertThat(extended).extracting(Leased::status, Leased::count, Leased::token)
                .containsExactly(Leased.Status.HELD, 3, a.token());
        Leased adopted = (Leased) checked(keys, LIMIT, "adopt A", () -> call(keys, Op.ADOPT, "A"));
        assertThat(adopted).extracting(Leased::status, Leased::count, Leased::token, Leased::lease)
                .containsExactly(Leased.Status.HELD, 3, a.token(), EXTENDED);
        assertThat(adopted.usage().used()).isEqualTo(3);

        // Parts given back by the new owner: W is granted only once used + 1 fits under 1.
        for (int keep = 2; keep >= 1; keep--) {
            int kept = keep;
            Released part = checked(keys, LIMIT, "A keeps " + keep,
                    () -> commands.release(keys, LIMIT, "A", kept, otherInbox));
            assertThat(part.left()).isEqualTo(keep);
            assertThat(part.usage().limit()).isEqualTo(1);
            assertThat(ScriptSnapshot.take(redis, keys).queue()).containsOnlyKeys(W);
        }
        checked(keys, LIMIT, "A keeps 0", () -> commands.release(keys, LIMIT, "A", 0, otherInbox));
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        assertThat(after.holders()).containsOnlyKeys(W);
        assertThat(after.used()).isEqualTo(1);
        checked(keys, LIMIT, "clear", () -> commands.overrideLimit(keys, LIMIT, 0));
    }

    @Test
    void aResentAcquireAboveALoweredLimitThatTakesTheHeadOutOfTheQueueServesTheWaiterBehindIt() {
        // I3: a resent call of the head with more permits than the override leaves the queue at
        // once; the waiter behind it must not be left waiting although it fits.
        SemaphoreKeys keys = keys("resent-above");
        try (InboxListener listener = new InboxListener()) {
            hold(keys, "A", 1, LEASE);
            hold(keys, "B", 1, LEASE);
            for (String[] waiter : new String[][] {{"X", "2"}, {"Y", "1"}}) {
                checked(keys, LIMIT, "queue " + waiter[0], () -> commands.acquire(keys, LIMIT, waiter[0],
                        Integer.parseInt(waiter[1]), LEASE, true, true, HEARTBEAT, listener.channel, OWNER));
            }
            checked(keys, LIMIT, "override 2", () -> commands.overrideLimit(keys, LIMIT, 2));
            checked(keys, LIMIT, "release B", () -> commands.release(keys, LIMIT, "B"));
            assertThat(ScriptSnapshot.take(redis, keys).queue()).containsOnlyKeys("X", "Y");

            Acquired refused = checked(keys, LIMIT, "acquire X again for 3 (> 2)", () -> commands.acquire(keys,
                    LIMIT, "X", 3, LEASE, true, true, HEARTBEAT, listener.channel, OWNER));

            assertThat(refused.status()).isEqualTo(Acquired.Status.REFUSED);
            ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
            assertThat(after.holders()).containsOnlyKeys("A", "Y");
            assertThat(after.queue()).isEmpty();
            listener.awaitHeard("Y " + after.infoOf("Y").token());
            checked(keys, LIMIT, "clear", () -> commands.overrideLimit(keys, LIMIT, 0));
        }
    }

    /** A JVM's inbox channel with somebody listening: what the scripts publish to it. */
    private final class InboxListener implements AutoCloseable {

        final String channel = prefix + ":inbox:listened-" + names.incrementAndGet();
        private final RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        private final StatefulRedisPubSubConnection<String, String> connection = client.connectPubSub();
        private final List<String> heard = new CopyOnWriteArrayList<>();

        InboxListener() {
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String from, String message) {
                    heard.add(message);
                }
            });
            connection.sync().subscribe(channel);
        }

        void awaitHeard(String... messages) {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(heard).containsExactly(messages));
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }

    // --- helpers ----------------------------------------------------------------------------------

    private SemaphoreKeys keys(String what) {
        return SemaphoreKeys.of(prefix, what + "-" + names.incrementAndGet());
    }

    private Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, Duration heartbeat) {
        return commands.acquire(keys, limit, id, count, lease, true, true, heartbeat, inbox, OWNER);
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
            case RELEASE_OWN -> commands.release(keys, LIMIT, id, 0, inbox);
            case RELEASE_PART -> commands.release(keys, LIMIT, id, 1, inbox);
            case RELEASE_HANDING_OVER -> commands.releaseHandingOver(keys, LIMIT, id, inbox);
            case RENEW -> commands.renew(keys, LIMIT, HEARTBEAT, inbox, List.of(id));
            case EXTEND -> commands.extend(keys, LIMIT, id, EXTENDED, inbox);
            case ADOPT -> commands.adopt(keys, LIMIT, id, otherInbox, "other-host/2/worker");
            case STATE -> commands.state(keys, LIMIT, 100);
            case OVERRIDE_LOWER -> commands.overrideLimit(keys, LIMIT, LOWERED);
            case OVERRIDE_RAISE -> commands.overrideLimit(keys, LIMIT, RAISED);
            case OVERRIDE_CLEAR -> commands.overrideLimit(keys, LIMIT, 0);
        };
    }

    /**
     * Runs one script call, which must not fail, then checks the invariants on the keys and that the
     * usage figures of the reply are those of the keys. {@code limit} is the caller's configured
     * limit; the limit of the call is the override when one is set (I6).
     */
    private <R> R checked(SemaphoreKeys keys, int limit, String step, Supplier<R> call) {
        ScriptSnapshot before = ScriptSnapshot.take(redis, keys);
        R reply;
        try {
            reply = call.get();
        } catch (RuntimeException e) {
            throw new AssertionError(step + " failed with " + e + "; keys: " + ScriptSnapshot.take(redis, keys), e);
        }
        ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
        Integer override = after.override();
        int callLimit = override != null ? override : limit;
        // Permits granted under another limit outlive it (I6), so once a semaphore had an override,
        // "held <= limit" is checked per grant, below.
        if (override != null) {
            overridden.add(keys.name());
        }
        assertThat(after.violations(overridden.contains(keys.name()) ? 0 : limit))
                .as("invariants after %s: %s", step, after).isEmpty();
        Usage usage = usage(reply);
        assertThat(usage.used()).as("used in the reply to %s: %s", step, after).isEqualTo(after.used());
        assertThat(usage.waiters()).as("waiters in the reply to %s: %s", step, after).isEqualTo(after.queue().size());
        assertThat(usage.limit()).as("limit in the reply to %s: %s", step, after).isEqualTo(callLimit);
        assertThat(usage.override()).as("override in the reply to %s", step).isEqualTo(override == null ? 0 : override);
        // I3: a call that granted anything (a holder with a new token) leaves used within its limit.
        boolean granted = after.holders().keySet().stream().anyMatch(id -> before.infoOf(id) == null
                || before.infoOf(id).token() != after.infoOf(id).token());
        if (granted) {
            assertThat(after.used()).as("used after %s granted: %s", step, after).isLessThanOrEqualTo(callLimit);
        }
        // I3: every call serves the queue, so its head waits only because it does not fit under the
        // limit of the call (one that can never fit is told so and leaves the queue).
        String head = after.head();
        if (head != null) {
            int count = after.infoOf(head).count();
            assertThat(count <= callLimit && after.used() + count > callLimit)
                    .as("the head %s (%s permits) waits under limit %s after %s: %s", head, count, callLimit, step,
                            after).isTrue();
        }
        // "When the keys go" (docs/how-it-works.md): a call sets no expiry later than 2 x L + 5 s from
        // now, L the longest lease or heartbeat; an expiry set earlier may stay (it never moves in).
        long latestExpiry = after.nowMs() + 2 * LONGEST.toMillis() + KEY_MARGIN_MS + ScriptSnapshot.EXPIRY_PRECISION_MS;
        after.expireAt().forEach((key, at) -> assertThat(at).as("expiry of %s after %s: %s", key, step, after)
                .isLessThanOrEqualTo(Math.max(before.expireAt().get(key) + ScriptSnapshot.EXPIRY_PRECISION_MS,
                        latestExpiry)));
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
        } else if (reply instanceof StateScript.Read r) {
            return r.usage();
        } else if (reply instanceof Leased r) {
            return r.usage();
        } else if (reply instanceof Usage r) {
            return r;
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
