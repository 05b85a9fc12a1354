package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.RenewScript.Renewed;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.StateScript;
import io.github.redissemaphore.core.internal.redis.Usage;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * A model-based test of the two levels of a capped semaphore ({@code _keys.lua}): a seeded random
 * walk of script calls on {@value #KEYS} keys (each {@value #N} permits) under one cap of
 * {@value #T}, by callers fair and unfair, waiting and not, asking 1 or 2 permits; releases whole
 * and in part, cancels of waiters and of holders, repeated acquires, runtime limits of a key and
 * of the cap set and cleared, renewals and state reads. A reference model in this class decides
 * every call as the README's rules say, and after every step the keys in Redis must be what the
 * model holds:
 * <ul>
 *   <li>the holders, with their counts, and every grant of the step in the model's order (tokens
 *       increase in grant order): per-key arrival order, and the fair share whenever the cap frees
 *       a permit (the waiting key holding the fewest, ties by the earliest arrival; a key that is
 *       full blocks no other);</li>
 *   <li>every key's used at most its limit and the cap's used at most the cap (unless a runtime
 *       limit was lowered under holders), the cap's used the sum over keys (K1);</li>
 *   <li>each key's waiters in arrival order, its counter their number, the queue and the heads
 *       the same entries (K2); ready exactly the keys whose head fits their own limit, scored by
 *       their used (K3); the first of ready does not fit the cap (K4: whoever could run under
 *       both limits runs, but nobody overtakes the first at the cap);</li>
 *   <li>no field of an idle key left behind;</li>
 *   <li>with the walk's queue bound (0..3 per key, drawn from the seed apart from the walk): a
 *       waiting caller is refused as full exactly when its key has that many waiters already,
 *       and leaves nothing behind (Q1).</li>
 * </ul>
 * No time passes that matters: leases and heartbeats outlive the walk, so every outcome is
 * decided by the calls alone. Deaths and expiries of two levels are {@link CappedSemaphoreTest}'s.
 * Steps: {@code -Dcapped.steps} (default {@value #DEFAULT_STEPS}); seeds: {@code -Dcapped.seed}
 * (default three fixed ones).
 */
@Tag("redis-compat")
@RedisTest
class CappedScriptModelTest {

    private static final int KEYS = 4;
    private static final int N = 2;
    private static final int T = 5;
    private static final int DEFAULT_STEPS = 1500;
    private static final Duration LEASE = Duration.ofMinutes(10);
    private static final Duration HEARTBEAT = Duration.ofMinutes(10);
    private static final String OWNER = "model/1/main";

    private RawScripts scripts;
    private StringRedisTemplate redis;
    private String prefix;
    private String inbox;
    /** Another JVM's inbox: a quarter of the acquisitions are its; a sweep never ends another JVM's lease. */
    private String otherInbox;
    private int semaphores;

    @BeforeEach
    void connect(RedisServer server) {
        scripts = new RawScripts(server.connectionFactory(RawScripts.TIMEOUT));
        redis = new StringRedisTemplate(server.connectionFactory());
        prefix = server.keyPrefix();
        inbox = prefix + ":inbox:nobody";
        otherInbox = prefix + ":inbox:other";
    }

    @Test
    void aSeededWalkKeepsBothLevelsArrivalOrderAndTheFairShare() {
        String seeds = System.getProperty("capped.seed", "1,42,20261127");
        int steps = Integer.getInteger("capped.steps", DEFAULT_STEPS);
        for (String seed : seeds.split(",")) {
            new Walk(Long.parseLong(seed.trim()), "capped-model-" + (++semaphores)).run(steps);
        }
    }

    @Test
    void badFirstArgumentsOfACappedSemaphoreAreErrorRepliesThatWriteNothing() {
        String name = "capped-bad-" + (++semaphores);
        SemaphoreKeys k0 = SemaphoreKeys.capped(prefix, name, "k0", T);
        SemaphoreKeys k1 = SemaphoreKeys.capped(prefix, name, "k1", T);
        scripts.acquire(k0, N, "h", 2, LEASE, true, true, HEARTBEAT, inbox, OWNER);
        scripts.acquire(k1, N, "g", 2, LEASE, true, true, HEARTBEAT, inbox, OWNER);
        scripts.acquire(k1, N, "w", 1, LEASE, true, true, HEARTBEAT, inbox, OWNER);
        scripts.overrideLimit(k0, N, 1);
        List<String> all = k0.all();
        Map<String, String> before = dumps(all);
        String counts = "1 " + LEASE.toMillis() + " " + HEARTBEAT.toMillis();
        String box = inbox + " " + OWNER;
        List<String> firsts = List.of("x", "5", "", "5 x k0", "5 6 k0", "0 0 k0", "1000001 2 k0", "5 0 k0",
                "5 2 " + "k".repeat(201), "5 2 k0 extra", "-5 2 k0", "5  2 k0");
        int calls = 0;
        for (String first : firsts) {
            for (String[] args : List.of(new String[] {first, "b", counts, box, "3"}, new String[] {first, "h"},
                    new String[] {first, "w", "1"}, new String[] {first, "30000", inbox, "h"},
                    new String[] {first, "10"}, new String[] {first, "h", "0", inbox, "1", OWNER},
                    new String[] {first, "2"})) {
                String script = switch (args.length) {
                    case 5 -> "acquire";
                    case 2 -> args[1].equals("h") ? "release" : args[1].equals("10") ? "state" : "override";
                    case 3 -> "cancel";
                    case 4 -> "renew";
                    default -> "lease";
                };
                expectRefused(script, all, args, before);
                calls++;
            }
        }
        // An acquire must name its key: without one it is about the cap as a whole.
        expectRefused("acquire", all, new String[] {T + " " + N, "b", counts, box, "3"}, before);
        assertThat(calls).isGreaterThan(80);
    }

    @Test
    void runtimeLimitsOfKeysAndOfTheCapOutliveAnIdleCap() {
        String name = "capped-idle-" + (++semaphores);
        SemaphoreKeys k0 = SemaphoreKeys.capped(prefix, name, "k0", T);
        SemaphoreKeys cap = SemaphoreKeys.capped(prefix, name, null, T);
        scripts.overrideLimit(k0, N, 1);
        scripts.overrideLimit(cap, N, 4);
        String state = cap.all().get(1);
        assertThat(redis.getExpire(state)).as("a runtime limit keeps the state key (I6)").isEqualTo(-1);
        // Idle past the keys' expiry: the next call starts the cap anew, keeping both runtime limits.
        long expires = Long.parseLong((String) redis.opsForHash().get(state, " expires"));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> expires < redis.execute(
                (org.springframework.data.redis.core.RedisCallback<Long>) c -> c.serverCommands().time()));
        assertThat(scripts.acquire(k0, N, "two", 2, LEASE, false, true, HEARTBEAT, inbox, OWNER).status())
                .as("k0 still limited to 1").isEqualTo(Acquired.Status.REFUSED);
        assertThat(scripts.acquire(k0, N, "one", 1, LEASE, false, true, HEARTBEAT, inbox, OWNER).status())
                .isEqualTo(Acquired.Status.GRANTED);
        StateScript.Read read = scripts.state(cap, N, 10);
        assertThat(read.usage().total()).isNotNull();
        assertThat(read.usage().total().limit()).as("the cap still 4").isEqualTo(4);
        scripts.release(k0, N, "one");
        scripts.overrideLimit(k0, N, 0);
        scripts.overrideLimit(cap, N, 0);
        assertThat(redis.getExpire(state)).as("cleared: the TTL is back").isPositive();
        assertThat(redis.<String, String>opsForHash().keys(state)).noneMatch(field -> field.startsWith(" k:"));
    }

    private void expectRefused(String script, List<String> keys, String[] args, Map<String, String> before) {
        String call = script + " " + java.util.Arrays.toString(args);
        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> redis.execute(
                io.github.redissemaphore.core.internal.redis.Scripts.load(script), keys, (Object[]) args));
        assertThat(error).as("%s must be refused", call).isNotNull();
        assertThat(dumps(keys)).as("%s wrote nothing", call).isEqualTo(before);
    }

    /** @return each key's DUMP as hex (absent: no entry), the TTL aside */
    private Map<String, String> dumps(List<String> keys) {
        Map<String, String> dumps = new TreeMap<>();
        for (String key : keys) {
            byte[] dump = redis.dump(key);
            if (dump != null) {
                dumps.put(key, java.util.HexFormat.of().formatHex(dump));
            }
        }
        return dumps;
    }

    /** One waiter of the model. */
    private record Waiter(String id, String key, int count, long arrival) {
    }

    /** One walk: the model, the calls, the checks. */
    private final class Walk {

        private final long seed;
        private final Random random;
        private final String name;
        private final Map<String, Integer> held = new LinkedHashMap<>();
        private final Map<String, String> keyOf = new HashMap<>();
        /** The JVM (inbox) of each acquisition. */
        private final Map<String, String> inboxOf = new HashMap<>();
        private int sweepsEnding;
        /** Calls refused because their key's queue was full. */
        private int fullRefusals;
        private int sweeps;
        /** After a pause: the next steps are a sweep of each key, as after a reconnect. */
        private int pendingSweeps;
        private final Map<String, Deque<Waiter>> queues = new TreeMap<>();
        private final Map<String, Integer> keyOverrides = new HashMap<>();
        private int capOverride;
        private long arrivals;
        private int ids;
        private final List<String> grantsOfStep = new ArrayList<>();
        private final List<String> log = new ArrayList<>();

        /**
         * The queue's bound of every waiting call of the walk, per key (Q1; 0: none): made of the
         * seed apart from the walk's randomness (the three default seeds: 2, 1, 0), so a seed
         * walks the same steps with or without it.
         */
        private final int bound;

        Walk(long seed, String name) {
            this.seed = seed;
            this.random = new Random(seed);
            this.bound = (int) Math.floorMod(seed * 7 + 3, 4L);
            this.name = name;
            for (int k = 0; k < KEYS; k++) {
                queues.put(key(k), new ArrayDeque<>());
            }
        }

        private String key(int k) {
            return "k" + k;
        }

        private SemaphoreKeys keys(String key) {
            return SemaphoreKeys.capped(prefix, name, key, T);
        }

        void run(int steps) {
            for (int step = 1; step <= steps; step++) {
                // and, while no sweep has found a lease to end yet (a long walk may have given back
                // every old lease of the sweeping JVM by then), every eighth of the walk after half
                boolean again = step > steps / 2 && sweepsEnding == 0 && step % Math.max(1, steps / 8) == 0;
                if (step == steps / 4 || step == steps / 2 || again) {
                    // The sweep spares leases younger than 1 s (S1): let those held now grow older, then
                    // sweep every key, as a JVM's renewals do after its connection was made anew.
                    try {
                        Thread.sleep(1100);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new AssertionError(e);
                    }
                    pendingSweeps = 2 * KEYS;
                }
                grantsOfStep.clear();
                String what = step();
                log.add(step + ": " + what);
                if (log.size() > 30) {
                    log.remove(0);
                }
                try {
                    check();
                } catch (AssertionError e) {
                    throw new AssertionError("seed " + seed + ", step " + step + " (" + what + "):\n"
                            + String.join("\n", log) + "\n" + e.getMessage(), e);
                }
            }
            assertThat(sweeps).as("seed " + seed + ": sweeps").isPositive();
            assertThat(sweepsEnding).as("seed " + seed + ": sweeps that ended a lease").isPositive();
            System.out.printf("capped model seed %d: queue bound %d per key, %d calls refused as full%n", seed, bound,
                    fullRefusals);
            if (bound > 0 && bound <= 2 && steps >= 1000) {
                assertThat(fullRefusals).as("seed " + seed + ": the walk reached the queue's bound").isPositive();
            }
            // Everything given back: nothing is left of the cap but its runtime limits.
            for (String id : new ArrayList<>(held.keySet())) {
                scripts.release(keys(keyOf.get(id)), N, id);
            }
            for (Deque<Waiter> queue : queues.values()) {
                for (Waiter waiter : new ArrayList<>(queue)) {
                    scripts.cancel(keys(waiter.key()), N, waiter.id(), true);
                }
            }
            scripts.overrideLimit(keys(null), N, 0);
            for (int k = 0; k < KEYS; k++) {
                scripts.overrideLimit(keys(key(k)), N, 0);
            }
            assertThat(redis.<String, String>opsForHash().keys(keys(null).all().get(1)))
                    .as("state fields left once idle").noneMatch(field -> field.startsWith(" k:"));
            assertThat(redis.opsForZSet().size(keys(null).all().get(3))).isZero();
            assertThat(redis.opsForZSet().size(keys(null).all().get(4))).isZero();
        }

        private String step() {
            int roll = random.nextInt(100);
            String key = key(random.nextInt(KEYS));
            if (pendingSweeps > 0) {
                --pendingSweeps;
                return sweep(key(pendingSweeps % KEYS), pendingSweeps < KEYS ? inbox : otherInbox);
            }
            if (roll < 40) {
                return acquireNew(key);
            } else if (roll < 62) {
                return release();
            } else if (roll < 72) {
                return cancel();
            } else if (roll < 77) {
                return reacquire();
            } else if (roll < 82) {
                int limit = random.nextInt(4);
                scripts.overrideLimit(keys(key), N, limit);
                if (limit == 0) {
                    keyOverrides.remove(key);
                } else {
                    keyOverrides.put(key, limit);
                }
                serve();
                return "override " + key + " to " + limit;
            } else if (roll < 86) {
                // (The cap never below a key's request: a waiter the cap alone can never serve is told so
                // once it is the first of ready, which the model does not follow.)
                int limit = random.nextInt(3) == 0 ? 0 : N + random.nextInt(T);
                scripts.overrideLimit(keys(null), N, limit);
                capOverride = limit;
                serve();
                return "override cap to " + limit;
            } else if (roll < 89) {
                List<String> mine = held.keySet().stream().filter(id -> keyOf.get(id).equals(key)).toList();
                List<String> ids = new ArrayList<>(mine);
                queues.get(key).forEach(waiter -> ids.add(waiter.id()));
                ids.add("unknown-" + random.nextInt(3));
                scripts.renew(keys(key), N, HEARTBEAT, inbox, ids);
                return "renew " + key + " " + ids;
            } else if (roll < 94) {
                return sweep(key, null);
            } else {
                return state(random.nextBoolean() ? key : null);
            }
        }

        /**
         * A renew of one JVM on {@code key} with a watermark (after its connection was made anew): it
         * names some of its leases there (renewed or spared) and maybe its waiters; S1: exactly its
         * unnamed leases of that key whose token is below min(watermark, server time - 1 s) end, as
         * releases would, their permits serving the queue in the same call; nothing else ends.
         */
        private String sweep(String key, String afterPause) {
            String jvm = afterPause != null ? afterPause : random.nextInt(3) == 0 ? otherInbox : inbox;
            Map<String, String> state = redis.<String, String>opsForHash().entries(keys(null).all().get(1));
            Map<String, Long> tokens = new HashMap<>();
            for (String id : held.keySet()) {
                String record = state.get(keyOf.get(id) + " " + id);
                assertThat(record).as("the record of " + id).isNotNull();
                tokens.put(id, Long.parseLong(record.split(" ")[3]));
            }
            List<String> own = held.keySet().stream()
                    .filter(id -> keyOf.get(id).equals(key) && inboxOf.get(id).equals(jvm)).toList();
            List<String> renewed = new ArrayList<>();
            List<String> spared = new ArrayList<>();
            for (String id : own) {
                // (After a pause, half of the leases go unnamed: a lost release's lease, for one.)
                switch (afterPause != null && random.nextBoolean() ? 2 : random.nextInt(3)) {
                    case 0 -> renewed.add(id);
                    case 1 -> spared.add(id);
                    default -> { }
                }
            }
            for (Waiter waiter : queues.get(key)) {
                if (inboxOf.get(waiter.id()).equals(jvm) && random.nextBoolean()) {
                    (random.nextBoolean() ? renewed : spared).add(waiter.id());
                }
            }
            if (random.nextInt(4) == 0) {
                renewed.add("unknown-" + random.nextInt(3));
            }
            List<String> ofKey = held.keySet().stream().filter(id -> keyOf.get(id).equals(key)).toList();
            long watermark = switch (afterPause != null ? 2 : random.nextInt(3)) {
                case 0 -> 1;
                case 1 -> ofKey.isEmpty() ? 1 : tokens.get(pick(ofKey)) + random.nextInt(3) - 1;
                default -> Long.MAX_VALUE / 2;
            };
            Renewed reply = scripts.renew(keys(key), N, HEARTBEAT, jvm, renewed, spared, Math.max(1, watermark));
            long below = Math.min(Math.max(1, watermark), reply.usage().serverMicros() - 1_000_000L);
            List<String> ends = own.stream()
                    .filter(id -> !renewed.contains(id) && !spared.contains(id) && tokens.get(id) < below).toList();
            String what = "sweep of " + (jvm.equals(inbox) ? "this" : "the other") + " JVM on " + key + " (watermark "
                    + watermark + ", below " + below + ", renews " + renewed + ", spares " + spared + ")";
            assertThat(reply.swept()).as(what + ": leases ended (S1), expected " + ends).isEqualTo(ends.size());
            ends.forEach(held::remove);
            serve();
            // The statuses, read after the grants of the same call: a waiter served now reports its token.
            for (int i = 0; i < renewed.size(); i++) {
                String id = renewed.get(i);
                long status = reply.statuses().get(i);
                if (tokens.containsKey(id) && held.containsKey(id)) {
                    assertThat(status).as(what + ": the status of " + id).isEqualTo(tokens.get(id));
                } else if (held.containsKey(id)) {
                    assertThat(status).as(what + ": the status of " + id + ", served now").isPositive();
                } else if (queues.get(key).stream().anyMatch(w -> w.id().equals(id))) {
                    assertThat(status).as(what + ": the status of waiter " + id).isEqualTo(Renewed.WAITING);
                } else {
                    assertThat(status).as(what + ": the status of " + id).isEqualTo(Renewed.GONE);
                }
            }
            sweeps++;
            if (!ends.isEmpty()) {
                sweepsEnding++;
            }
            checkFigures(what, reply.usage(), key);
            return what + " -> ended " + ends;
        }

        private String acquireNew(String key) {
            String id = "p" + (++ids);
            inboxOf.put(id, random.nextInt(4) == 0 ? otherInbox : inbox);
            int count = 1 + random.nextInt(N);
            boolean wait = random.nextInt(3) > 0;
            boolean fair = random.nextInt(4) > 0;
            keyOf.put(id, key);
            Acquired reply = wait
                    ? scripts.acquire(keys(key), N, id, count, LEASE, fair, HEARTBEAT, inboxOf.get(id), OWNER, bound,
                            Duration.ZERO)
                    : scripts.acquire(keys(key), N, id, count, LEASE, false, fair, HEARTBEAT, inboxOf.get(id), OWNER);
            Acquired.Status expected;
            boolean fits = used() + count <= capLimit() && used(key) + count <= keyLimit(key);
            if (fits && (!fair || (queues.get(key).isEmpty() && ready().isEmpty()))) {
                held.put(id, count);
                grantsOfStep.add(id);
                expected = Acquired.Status.GRANTED;
            } else if (!wait || count > capLimit() || count > keyLimit(key)) {
                expected = Acquired.Status.REFUSED;
            } else if (bound > 0 && queues.get(key).size() >= bound) {
                // Q1: its key's queue is full; nothing of it is written (the keys are compared after the step).
                keyOf.remove(id);
                inboxOf.remove(id);
                fullRefusals++;
                expected = Acquired.Status.FULL;
            } else {
                queues.get(key).add(new Waiter(id, key, count, ++arrivals));
                expected = Acquired.Status.QUEUED;
                serve();
            }
            String what = "acquire " + id + " on " + key + " x" + count + (wait ? " wait" : "") + (fair ? " fair" : "");
            assertThat(reply.status()).as(what).isEqualTo(expected);
            checkFigures(what, reply.usage(), key);
            return what + " -> " + expected;
        }

        private String release() {
            if (held.isEmpty()) {
                return "release: nothing held";
            }
            String id = pick(new ArrayList<>(held.keySet()));
            int count = held.get(id);
            int keep = count > 1 && random.nextBoolean() ? 1 : 0;
            Usage figures = scripts.release(keys(keyOf.get(id)), N, id, keep, inboxOf.get(id)).usage();
            if (keep == 0) {
                held.remove(id);
            } else {
                held.put(id, keep);
            }
            serve();
            checkFigures("release " + id, figures, keyOf.get(id));
            return "release " + id + " of " + keyOf.get(id) + " keeping " + keep;
        }

        private String cancel() {
            List<Waiter> waiting = queues.values().stream().flatMap(Deque::stream).toList();
            if (!waiting.isEmpty() && random.nextInt(3) > 0) {
                Waiter waiter = pick(waiting);
                boolean release = random.nextBoolean();
                scripts.cancel(keys(waiter.key()), N, waiter.id(), release);
                queues.get(waiter.key()).remove(waiter);
                serve();
                return "cancel waiter " + waiter.id();
            }
            if (held.isEmpty()) {
                return "cancel: nobody";
            }
            String id = pick(new ArrayList<>(held.keySet()));
            boolean release = random.nextBoolean();
            scripts.cancel(keys(keyOf.get(id)), N, id, release);
            if (release) {
                held.remove(id);
                serve();
            }
            return "cancel holder " + id + (release ? " releasing" : " keeping");
        }

        private String reacquire() {
            List<Waiter> waiting = queues.values().stream().flatMap(Deque::stream).toList();
            if (!waiting.isEmpty() && random.nextBoolean()) {
                Waiter waiter = pick(waiting);
                // (A waiter that calls again is never refused for the bound, Q1.)
                Acquired reply = scripts.acquire(keys(waiter.key()), N, waiter.id(), waiter.count(), LEASE, true,
                        HEARTBEAT, inboxOf.get(waiter.id()), OWNER, bound, Duration.ZERO);
                // One that asks more than a lowered limit of its key leaves at once (I6), not at its head.
                boolean never = waiter.count() > keyLimit(waiter.key()) || waiter.count() > capLimit();
                if (never) {
                    queues.get(waiter.key()).remove(waiter);
                    serve();
                }
                assertThat(reply.status()).as("a waiter's repeated acquire")
                        .isEqualTo(never ? Acquired.Status.REFUSED : Acquired.Status.QUEUED);
                return "repeat acquire of waiter " + waiter.id();
            }
            if (held.isEmpty()) {
                return "repeat: nobody";
            }
            String id = pick(new ArrayList<>(held.keySet()));
            Acquired reply = scripts.acquire(keys(keyOf.get(id)), N, id, 1, LEASE, true, true, HEARTBEAT,
                    inboxOf.get(id), OWNER);
            assertThat(reply.status()).as("a holder's repeated acquire").isEqualTo(Acquired.Status.GRANTED);
            return "repeat acquire of holder " + id;
        }

        private String state(String key) {
            StateScript.Read read = scripts.state(keys(key), N, 1000);
            if (key == null) {
                Usage.Total total = read.usage().total();
                assertThat(total).isNotNull();
                assertThat(total.used()).as("the cap's used").isEqualTo(used());
                assertThat(total.limit()).isEqualTo(capLimit());
                assertThat(read.state().holders()).extracting(SemaphoreState.Holder::permitId)
                        .containsExactlyInAnyOrderElementsOf(held.keySet());
                return "state of the cap";
            }
            assertThat(read.usage().used()).as("used of " + key).isEqualTo(used(key));
            assertThat(read.usage().limit()).as("limit of " + key).isEqualTo(keyLimit(key));
            assertThat(read.state().waiters()).extracting(SemaphoreState.Waiter::waiterId).as("waiters of " + key)
                    .containsExactlyElementsOf(queues.get(key).stream().map(Waiter::id).toList());
            assertThat(read.state().total()).isNotNull();
            return "state of " + key;
        }

        /**
         * The figures a reply carries, whichever path made it (the short path's text or the general
         * path's table): the key's and the cap's, as the model has them after the call.
         */
        private void checkFigures(String call, Usage usage, String key) {
            assertThat(usage.used()).as(call + ": the key's used in the reply").isEqualTo(used(key));
            assertThat(usage.waiters()).as(call + ": the key's waiters in the reply").isEqualTo(queues.get(key).size());
            assertThat(usage.limit()).as(call + ": the key's limit in the reply").isEqualTo(keyLimit(key));
            assertThat(usage.total()).as(call + ": the cap's figures").isNotNull();
            assertThat(usage.total().used()).as(call + ": the cap's used in the reply").isEqualTo(used());
            assertThat(usage.total().limit()).as(call + ": the cap in the reply").isEqualTo(capLimit());
            assertThat(usage.total().waiters()).as(call + ": the cap's waiters in the reply")
                    .isEqualTo(queues.values().stream().mapToInt(Deque::size).sum());
        }

        /** The README's rules: the cap to the waiting key holding the fewest, while it fits. */
        private void serve() {
            while (true) {
                Map<String, Waiter> ready = ready();
                Waiter first = ready.values().stream()
                        .min(Comparator.<Waiter>comparingInt(w -> used(w.key())).thenComparingLong(Waiter::arrival))
                        .orElse(null);
                if (first == null || used() + first.count() > capLimit()) {
                    return;
                }
                queues.get(first.key()).removeFirst();
                held.put(first.id(), first.count());
                grantsOfStep.add(first.id());
            }
        }

        /** Keys whose head fits their own limit, each with its head; heads never servable are dropped. */
        private Map<String, Waiter> ready() {
            Map<String, Waiter> ready = new LinkedHashMap<>();
            for (Map.Entry<String, Deque<Waiter>> entry : queues.entrySet()) {
                String key = entry.getKey();
                Deque<Waiter> queue = entry.getValue();
                while (!queue.isEmpty() && (queue.peekFirst().count() > keyLimit(key)
                        || queue.peekFirst().count() > capLimit())) {
                    queue.removeFirst();
                }
                if (!queue.isEmpty() && used(key) + queue.peekFirst().count() <= keyLimit(key)) {
                    ready.put(key, queue.peekFirst());
                }
            }
            return ready;
        }

        private int used() {
            return held.values().stream().mapToInt(Integer::intValue).sum();
        }

        private int used(String key) {
            return held.entrySet().stream().filter(e -> keyOf.get(e.getKey()).equals(key))
                    .mapToInt(Map.Entry::getValue).sum();
        }

        private int capLimit() {
            return capOverride > 0 ? capOverride : T;
        }

        private int keyLimit(String key) {
            return keyOverrides.getOrDefault(key, N);
        }

        private <E> E pick(List<E> from) {
            return from.get(random.nextInt(from.size()));
        }

        /** Redis against the model, and the invariants of both levels. */
        private void check() {
            List<String> all = keys(null).all();
            // (Used above a limit lowered under its holders is allowed: the grants are checked below.)
            assertThat(ScriptSnapshot.take(redis, keys(null)).violations(capLimit(), N))
                    .filteredOn(problem -> !problem.contains("over its limit") && !problem.contains("over the limit"))
                    .as("the invariants (ScriptSnapshot)").isEmpty();
            Map<String, String> state = redis.<String, String>opsForHash().entries(all.get(1));
            Map<String, Integer> holders = new TreeMap<>();
            Map<Long, String> tokens = new TreeMap<>();
            Map<String, Integer> usedOf = new TreeMap<>();
            for (Map.Entry<String, String> field : state.entrySet()) {
                if (field.getKey().startsWith(" ")) {
                    continue;
                }
                String[] member = field.getKey().split(" ");
                String[] record = field.getValue().split(" ");
                long token = Long.parseLong(record[3]);
                if (token > 0) {
                    holders.put(member[1], Integer.parseInt(record[0]));
                    tokens.put(token, member[1]);
                    usedOf.merge(member[0], Integer.parseInt(record[0]), Integer::sum);
                }
            }
            assertThat(holders).as("holders").isEqualTo(new TreeMap<>(held));
            List<String> newest = new ArrayList<>(tokens.values());
            assertThat(newest.subList(newest.size() - grantsOfStep.size(), newest.size()))
                    .as("this step's grants, in token order").isEqualTo(grantsOfStep);
            int used = used();
            assertThat(Integer.parseInt(state.getOrDefault(" used", "0"))).as("the cap's used (K1)").isEqualTo(used);
            assertThat(Integer.parseInt(state.getOrDefault(" waiters", "0"))).as("the cap's waiters")
                    .isEqualTo(queues.values().stream().mapToInt(Deque::size).sum());
            Map<String, List<String>> heads = new TreeMap<>();
            for (String entry : redis.opsForZSet().range(all.get(3), 0, -1)) {
                String[] parts = entry.split(" ");
                heads.computeIfAbsent(parts[0], k -> new ArrayList<>()).add(parts[2]);
            }
            Map<String, List<String>> expectedHeads = new TreeMap<>();
            queues.forEach((key, queue) -> {
                if (!queue.isEmpty()) {
                    expectedHeads.put(key, queue.stream().map(Waiter::id).toList());
                }
            });
            assertThat(heads).as("each key's waiters in arrival order (K2)").isEqualTo(expectedHeads);
            assertThat(redis.opsForZSet().size(all.get(2))).as("queue = heads")
                    .isEqualTo((long) queues.values().stream().mapToInt(Deque::size).sum());
            Map<String, Double> ready = new TreeMap<>();
            for (TypedTuple<String> entry : redis.opsForZSet().rangeWithScores(all.get(4), 0, -1)) {
                ready.put(entry.getValue().split(" ")[1], entry.getScore());
            }
            Map<String, Double> expectedReady = new TreeMap<>();
            ready().forEach((key, head) -> expectedReady.put(key, (double) used(key)));
            assertThat(ready).as("ready: keys whose head fits their own limit, by used (K3)").isEqualTo(expectedReady);
            ready().values().stream()
                    .min(Comparator.<Waiter>comparingInt(w -> used(w.key())).thenComparingLong(Waiter::arrival))
                    .ifPresent(first -> assertThat(used + first.count()).as("K4: the first of ready does not fit the cap")
                            .isGreaterThan(capLimit()));
            for (int k = 0; k < KEYS; k++) {
                String key = key(k);
                String field = state.get(" k:" + key);
                int keyUsed = used(key);
                if (keyUsed == 0 && queues.get(key).isEmpty() && !keyOverrides.containsKey(key)) {
                    assertThat(field).as("an idle key's field").isNull();
                    continue;
                }
                assertThat(field).as("the field of " + key).isNotNull();
                String[] parts = field.split(" ");
                assertThat(Integer.parseInt(parts[0])).as("used of " + key + " (K1)").isEqualTo(keyUsed)
                        .isEqualTo(usedOf.getOrDefault(key, 0));
                assertThat(Integer.parseInt(parts[1])).as("waiters of " + key + " (K2)").isEqualTo(queues.get(key).size());
                assertThat(Integer.parseInt(parts[3])).as("runtime limit of " + key)
                        .isEqualTo(keyOverrides.getOrDefault(key, 0));
            }
            // A grant never takes used above the limit of the call that makes it, at either level (I3);
            // used may stay above a limit lowered under its holders (I6) until they leave.
            if (!grantsOfStep.isEmpty()) {
                assertThat(used).as("the cap's used after a grant").isLessThanOrEqualTo(capLimit());
            }
            for (String id : grantsOfStep) {
                String key = keyOf.get(id);
                assertThat(used(key)).as("used of " + key + " after a grant").isLessThanOrEqualTo(keyLimit(key));
            }
        }
    }
}
