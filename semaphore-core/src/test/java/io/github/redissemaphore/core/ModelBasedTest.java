package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.Engines;
import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.CancelScript;
import io.github.redissemaphore.core.internal.redis.ReleaseScript;
import io.github.redissemaphore.core.internal.redis.RenewScript;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.Usage;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.awaitility.Awaitility.await;

/**
 * A model-based test of the semaphore, scripts and clients together, in the way Jepsen and
 * Hazelcast test their semaphores: a seeded random walk over three registries (three "JVMs") on a
 * Redis server of its own, checking after every step, on an atomic snapshot of the five keys
 * ({@link ModelSnapshot}), the invariants the scripts promise and what the callers believe.
 *
 * <h2>The walk</h2>
 * Each step draws one operation from a {@link Random} of its own, seeded from the walk's seed, so
 * step <i>n</i> always draws the same operation and parameters:
 * <ul>
 *   <li>acquire without waiting ({@code acquireAsync(n, 0)} or {@code tryAcquire()}), with a short
 *       or a long wait ({@code acquireAsync}), or blocking on a thread of its own
 *       ({@code tryAcquire(n, maxWait)}); one or several permits; fair and unfair registries; a
 *       caller keeps its permit for a while (often none, often past a short lease);</li>
 *   <li>cancel a waiting future ({@code cancel(true)}), interrupt a blocked thread, let a wait time
 *       out, release a permit, release it again, give back part of a multi-permit lease;</li>
 *   <li>call the scripts directly, as a client library repeating a command after a reconnect
 *       would: renew (held ids, of its own JVM and of another, released and unknown ids, live
 *       waiters), a repeated acquire of a held id, cancel of an unknown or released id, cancel of a
 *       live waiter (its JVM must re-join);</li>
 *   <li>a phantom party: an acquire straight through the script with an inbox nobody listens on,
 *       then never a heartbeat or renewal: a waiter or holder that died at once (waiter death); it
 *       may come back for one call (release, cancel with or without release);</li>
 *   <li>{@code state()}; a pause, so leases (300 ms .. 15 s, some not auto-renewed), claims and
 *       heartbeats run out;</li>
 *   <li>a runtime limit (1..6) set through a live registry, or cleared: every party follows it
 *       (I6), held permits stay held when it is lowered, waiters above it are rejected early;</li>
 *   <li>a JVM kill ({@link Engines#halt}, its connections dropped) or a clean
 *       close, each followed by a new registry with new settings (limit 1..5, lease, fairness,
 *       renewal): limits change while others hold and wait;</li>
 *   <li>data loss: FLUSHALL, a Redis restart without data, SIGKILL and restart (sometimes with a
 *       call while Redis is down, which must fail at once with
 *       {@link SemaphoreUnavailableException}).</li>
 * </ul>
 *
 * <h2>Checked after every step</h2>
 * On the snapshot (one read-only script: TIME, the three keys, their expiry):
 * <ul>
 *   <li>I1: {@code used} is the sum of the holders' counts (0, or no state, without holders);</li>
 *   <li>I2: every holder and waiter has a parsable record (a holder's with a token, a waiter's
 *       with token 0), no record without a holder or waiter, no id both, and every waiter in the
 *       queue has its deadline;</li>
 *   <li>I3: the holders' counts stay within the limit of the call that made the newest grant,
 *       taken as the largest limit of a party alive within 2 s of that grant's time, or only the
 *       runtime limits set around it when one was set throughout those 4 s (a fencing
 *       token is at least the server time in us when it is issued); strict FIFO: a waiter of a
 *       fair party that was behind another in the previous snapshot never holds while that other
 *       still waits with the same ticket, and a fair registry's zero-wait call is never granted
 *       while a waiter queued before it still waits; after every call the head of the queue waits
 *       only because it does not fit ({@code used + count > limit} of the last call);</li>
 *   <li>I4: every existing key expires, and not before any deadline the keys hold (the state key
 *       has no TTL while a runtime limit is set, I6);</li>
 *   <li>tokens and tickets only go up, also across data loss, and stay below state.seq; no
 *       deadline lies further ahead than the lease or claim of its record; every record carries
 *       the settings (count, lease, claim) of the party that wrote it; a state() call leaves no
 *       expired entry behind; a call that confirms a lease (renew, repeated acquire, cancel of a
 *       granted waiter) leaves it a full lease; what the walk gave back is gone;</li>
 *   <li>dead parties (halted, closed, phantom: the inbox in a record tells whose it is): a holder
 *       ends by death + slack + max(lease, claim), or by its grant + claim when it was granted
 *       after death (token / 1000 is its grant time), a waiter by death + slack + heartbeat; the
 *       slack is 1 s for a registry (a call in flight when it died), 5 ms for a phantom;</li>
 *   <li>the callers' view: every permit a live registry's caller holds ({@code isHeld()} true,
 *       asked after the snapshot) is a holder with its token, at least its count (a part given
 *       back goes down in the caller first) and a deadline not yet passed, and
 *       their counts sum to no more than the limit; a permit released while Redis was up is gone
 *       from Redis; a renew or repeated release of a released id finds nothing; a live registry's
 *       holder that no caller was handed for 5 s is a leak; close() answers every acquisition of
 *       its registry and takes its entries out of Redis;</li>
 *   <li>the queue's bound (Q1; two registries in three have one, 1..5, drawn from the seed apart
 *       from the walk): each waiter of a bounded registry has fewer than its bound ahead of it;</li>
 *   <li>every acquisition ends: with a permit (its token above every token and ticket seen before
 *       it started), a rejection (a waiting one not before its wait ended, unless a party with a
 *       smaller limit was around or its bounded queue was full), or a cancellation or interrupt the walk caused; a zero wait is
 *       answered by the reply of its one call (acquireAsync itself never blocks); no wait outlives its maxWait by 10 s.</li>
 * </ul>
 * Exempt, by design: a permit granted before the latest data loss (the documented window in which
 * a Redis that lost its data makes holders lose theirs), and a grant that reached its JVM more than
 * half a claim after it was made (the JVM counts on half the claim from when it hears of it; a
 * machine that stalls longer breaks that assumption). {@link SemaphoreUnavailableException} is
 * accepted only when the caller's registry was closed or halted, when a restart or kill of Redis
 * overlapped the call (with 8 s for clients to reconnect), or when the walk interrupted a thread
 * inside a Redis call (the client gives the call up; counted); FLUSHALL leaves Redis reachable,
 * so it excuses nothing.
 *
 * <p>At the end every wait is cancelled and every permit released, after which no live registry
 * may have an entry left (a leak); the registries close, the dead parties' entries run out, and a
 * fresh registry's {@code state()} shows nothing used, held or waiting.
 *
 * <h2>Running it</h2>
 * The walk prints {@code ModelBasedTest seed=<seed> steps=<n>} first (surefire puts the output in
 * {@code target/surefire-reports/io.github.redissemaphore.core.ModelBasedTest-output.txt}), and a
 * summary of what it did and checked at the end; a failure message carries the seed, the step,
 * the parties and the last operations. By default the seed is random and the walk has 2,000 steps
 * (20..40 s; under a minute on a loaded 2-core machine), so every {@code ./mvnw -B verify} walks
 * somewhere new. The same seed draws the same operations again, but what they act on depends on
 * timing (which waits were granted by then...), so a failure that needs a race may need a few
 * runs. A long run, or a replay:
 * <pre>
 * ./mvnw -B -o -pl semaphore-core test -Dtest=ModelBasedTest -Dmodel.steps=50000 -Dmodel.seed=42 \
 *     -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@Tag("redis-compat")
@Tag("slow")
@RedisTest
class ModelBasedTest {

    /** A zero wait is one call: answered within the command timeout, with room for a loaded machine. */
    private static final Duration ZERO_WAIT_ANSWER = Duration.ofSeconds(10);
    /** Steps of a default run: about 30 s on an idle 2-core machine. */
    private static final int DEFAULT_STEPS = 2000;
    private static final String NAME = "model";
    private static final String PREFIX = "model";
    private static final Duration TICK = Duration.ofMillis(200);
    private static final Duration HEARTBEAT = Duration.ofSeconds(2);
    private static final long HEARTBEAT_MS = HEARTBEAT.toMillis();
    private static final int SLOTS = 3;
    /**
     * Leases of the registries, and how often each is drawn; {@code -Dmodel.leases=300,1000,...}
     * draws from another list instead (to explore around a failure already known, e.g. one that
     * only long leases show).
     */
    private static final long[] LEASES = {300, 600, 1000, 1500, 5000, 15000};
    private static final int[] LEASE_WEIGHTS = {15, 20, 20, 20, 15, 10};
    /** A halted registry may have a call in flight when it dies. */
    private static final long DEAD_SLACK_MS = 1000;
    /** A phantom's only call is the one we made: no slack but rounding. */
    private static final long PHANTOM_SLACK_MS = 5;
    /** Around a grant, the parties whose limit may have made it. */
    private static final long LIMIT_WINDOW_MS = 2000;
    /** After a restart, how long clients may still fail (reconnect, a command that timed out). */
    private static final long OUTAGE_GRACE_NANOS = Duration.ofSeconds(8).toNanos();
    private static final long HANG_SLACK_NANOS = Duration.ofSeconds(10).toNanos();
    private static final long ORPHAN_MS = 5000;
    /** Clock granularity between the JVM's and Redis' view of the same deadline. */
    private static final long CLOCK_TOLERANCE_MS = 20;
    private static final int MAX_OPEN_WAITS = 14;
    private static final int MAX_BLOCKED_THREADS = 4;

    /** The operations of the walk, with their weights. */
    private enum Op {
        ACQUIRE_NOW(140), ACQUIRE_SHORT_WAIT(80), ACQUIRE_LONG_WAIT(80), ACQUIRE_BLOCKING(40), CANCEL(45),
        INTERRUPT(30), RELEASE(170), RELEASE_AGAIN(30), RELEASE_PART(30), RAW_RENEW(40), RAW_REPEATED_ACQUIRE(30),
        RAW_CANCEL_UNKNOWN(20), RAW_CANCEL_WAITER(20), PHANTOM(30), PHANTOM_COMES_BACK(15), PHANTOM_SWEEPS(20), STATE(30),
        PAUSE(60), HALT(5), CLOSE_AND_RECONFIGURE(5), FLUSHALL(3), RESTART(1), KILL(1), OVERRIDE(12);

        final int weight;

        Op(int weight) {
            this.weight = weight;
        }

        static final int TOTAL = java.util.Arrays.stream(values()).mapToInt(op -> op.weight).sum();

        static Op pick(int roll) {
            for (Op op : values()) {
                roll -= op.weight;
                if (roll < 0) {
                    return op;
                }
            }
            throw new IllegalStateException();
        }
    }

    private enum Life { ALIVE, CLOSED, HALTED, PHANTOM }

    /** A registry (a JVM) or a phantom party, identified in Redis by its inbox channel. */
    private static final class Party {
        final String label;
        final String inbox;
        final int limit;
        final long leaseMs;
        final long claimMs;
        final boolean fair;
        final boolean autoRenew;
        /** The queue's bound its semaphore is configured with (0: none). */
        int maxWaiters;
        final SemaphoreRegistry registry;
        final LettuceConnectionFactory factory;
        final RedisSemaphore semaphore;
        final long liveFromMs;
        long liveToMs = Long.MAX_VALUE;
        Life life;
        /** Server ms of its death (halt, close, a phantom's only call); MAX while alive. */
        long deathMs = Long.MAX_VALUE;
        long deathSlackMs;

        Party(String label, String inbox, int limit, long leaseMs, long claimMs, boolean fair, boolean autoRenew,
              SemaphoreRegistry registry, LettuceConnectionFactory factory, RedisSemaphore semaphore,
              long liveFromMs, Life life) {
            this.label = label;
            this.inbox = inbox;
            this.limit = limit;
            this.leaseMs = leaseMs;
            this.claimMs = claimMs;
            this.fair = fair;
            this.autoRenew = autoRenew;
            this.registry = registry;
            this.factory = factory;
            this.semaphore = semaphore;
            this.liveFromMs = liveFromMs;
            this.life = life;
        }

        boolean alive() {
            return life == Life.ALIVE;
        }

        boolean dead() {
            return deathMs != Long.MAX_VALUE;
        }

        @Override
        public String toString() {
            return label + "[" + life + ", limit " + limit + ", lease " + leaseMs + " ms, claim " + claimMs + " ms, "
                    + (fair ? "fair" : "unfair") + (autoRenew ? ", renewed" : "")
                    + (maxWaiters > 0 ? ", max-waiters " + maxWaiters : "") + ", inbox " + inbox + "]";
        }
    }

    private enum Kind { NOW, ASYNC, BLOCKING }

    /** One acquisition by a caller of a registry. */
    private static final class Acq {
        final int no;
        final Party party;
        final Kind kind;
        final int count;
        final Duration maxWait;
        final long startNanos = System.nanoTime();
        final long startWallMs = System.currentTimeMillis();
        /** Highest token or ticket seen in a snapshot before it started: its permit's token is above. */
        final long tokenFloor;
        CompletableFuture<Permit> future;
        volatile long completedWallMs;
        volatile long completedNanos;
        Thread thread;
        boolean immediate;
        boolean cancelled;
        boolean interrupted;
        long interruptNanos;
        /** How long the caller keeps a permit before the walk may release it. */
        long holdMs;

        Acq(int no, Party party, Kind kind, int count, Duration maxWait, long tokenFloor) {
            this.no = no;
            this.party = party;
            this.kind = kind;
            this.count = count;
            this.maxWait = maxWait;
            this.tokenFloor = tokenFloor;
        }

        void watch(CompletableFuture<Permit> future) {
            this.future = future;
            future.whenComplete((permit, error) -> {
                completedNanos = System.nanoTime();
                completedWallMs = System.currentTimeMillis();
            });
        }

        @Override
        public String toString() {
            return "#" + no + " " + kind + " " + count + " of " + party.label + " wait " + maxWait.toMillis() + " ms";
        }
    }

    /** A permit a caller was given. */
    private static final class Held {
        final Permit permit;
        final Acq acq;
        final long token;
        /** Heard more than half a claim after its grant: the JVM may count on it past Redis' deadline. */
        final boolean lateClaim;
        boolean released;
        boolean releaseEffective;
        long releaseNanos;

        Held(Permit permit, Acq acq, boolean lateClaim) {
            this.permit = permit;
            this.acq = acq;
            this.token = permit.fencingToken();
            this.lateClaim = lateClaim;
        }

        Party party() {
            return acq.party;
        }

        @Override
        public String toString() {
            return "permit " + permit.id() + " (" + acq + ", token " + token + (lateClaim ? ", heard late" : "") + ")";
        }
    }

    private long seed;
    /** How the walk marks an empty tryAcquire, which does not tell its reason. */
    private static final SemaphoreRejectedException.Reason UNTOLD = SemaphoreRejectedException.Reason.WAIT_TIMED_OUT;
    private static final String UNTOLD_WHY = "(tryAcquire)";
    /** Draws each registry's queue bound, apart from the walk's randomness (see newRegistry). */
    private Random boundRandom;
    private int steps;
    private int step;
    private String operation = "set-up";
    private RedisServer server;
    private RedisClient observerClient;
    private StatefulRedisConnection<String, String> observerConnection;
    private RedisCommands<String, String> observer;
    private RawScripts raw;
    private SemaphoreKeys keys;
    private final List<Party> parties = new ArrayList<>();
    private final Map<String, Party> byInbox = new HashMap<>();
    private final Party[] slots = new Party[SLOTS];
    private final List<Acq> open = new ArrayList<>();
    private final List<Held> permits = new ArrayList<>();
    private final Map<String, Held> permitsById = new HashMap<>();
    private final List<Held> releasedPermits = new ArrayList<>();
    private final List<Held> justReleased = new ArrayList<>();
    private final Set<Long> tokens = new HashSet<>();
    private final ArrayDeque<String> history = new ArrayDeque<>();
    private final Map<String, Long> unknownHolderSince = new HashMap<>();
    private final List<long[]> outages = new ArrayList<>();
    private final Map<String, Integer> stats = new TreeMap<>();
    /** Milliseconds spent per operation, with the checks after it. */
    private final Map<String, Long> spent = new TreeMap<>();
    private ModelSnapshot previous;
    private ModelSnapshot current;
    /** Highest token or ticket in any snapshot so far. */
    private long tokenFloor;
    /** Server time (us) right after the latest data loss; a permit with a lower token may be gone. */
    private long dataLossEndUs;
    private boolean redisUp = true;
    private int partyNo;
    private int acqNo;
    private int phantomNo;
    private long endMillis;
    /** Ids the walk's own call extended to a full lease: id -> earliest deadline it may have. */
    private final Map<String, Long> fullLease = new HashMap<>();
    /** Ids given back by the walk: gone from Redis for good. */
    private final List<String> mustBeGone = new ArrayList<>();
    /** Zero-wait acquisitions of this step that got a permit. */
    private List<Acq> grantedThisStep = new ArrayList<>();
    /** Server ms before a state() call: every deadline before it must be purged in the next snapshot. */
    private long purgedBefore = Long.MIN_VALUE;
    /**
     * Runtime limits the walk set, in the order set: {limit, from, to} in server ms, from before the
     * call that set it to after the one that cleared or replaced it (or the data loss that wiped it).
     */
    private final List<long[]> overrides = new ArrayList<>();
    /** The runtime limit in Redis now (0: none), or -1 after a call that failed may have changed it. */
    private int override;

    @Test
    void randomWalk(@Dedicated RedisServer server) throws Exception {
        String seedProperty = System.getProperty("model.seed");
        seed = seedProperty == null || seedProperty.isBlank() ? new SecureRandom().nextLong()
                : Long.parseLong(seedProperty.trim());
        String stepsProperty = System.getProperty("model.steps");
        steps = stepsProperty == null || stepsProperty.isBlank() ? DEFAULT_STEPS
                : Integer.parseInt(stepsProperty.trim());
        System.out.println("ModelBasedTest seed=" + seed + " steps=" + steps);
        long started = System.nanoTime();
        this.server = server;
        try {
            setUp();
            walk();
            long end = System.nanoTime();
            finish();
            endMillis = (System.nanoTime() - end) / 1_000_000;
        } finally {
            tearDown();
        }
        System.out.println("ModelBasedTest seed=" + seed + " steps=" + steps + " passed in "
                + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms (end phase " + endMillis
                + " ms); outcomes and operations: " + stats + "; ms per operation: " + spent);
    }

    // ---------------------------------------------------------------------------------------------
    // Set-up, walk, end

    private void setUp() {
        observerClient = RedisClient.create(RedisURI.builder().withHost(server.host()).withPort(server.port())
                .withTimeout(Duration.ofSeconds(5)).build());
        observerConnection = observerClient.connect();
        observer = observerConnection.sync();
        raw = new RawScripts(server.connectionFactory());
        keys = SemaphoreKeys.of(PREFIX, NAME);
        Random setup = new Random(seed);
        boundRandom = new Random(~seed);
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = newRegistry(new Random(setup.nextLong()), false);
        }
        afterStep();
    }

    private void walk() throws Exception {
        Random master = new Random(seed ^ 0x5DEECE66DL);
        for (step = 1; step <= steps; step++) {
            Random r = new Random(master.nextLong());
            Op op = Op.pick(r.nextInt(Op.TOTAL));
            operation = op.name();
            long began = System.nanoTime();
            String done = perform(op, r);
            remember(step + " " + done);
            count(op.name());
            long checks = System.nanoTime();
            afterStep();
            spent.merge(op.name(), (System.nanoTime() - began) / 1_000_000, Long::sum);
            spent.merge("(checks after steps)", (System.nanoTime() - checks) / 1_000_000, Long::sum);
        }
    }

    private void finish() throws Exception {
        step = steps + 1;
        operation = "end: cancel every wait, release every permit";
        remember(operation);
        for (Acq a : List.copyOf(open)) {
            if (!a.party.alive()) {
                continue;
            }
            if (a.kind == Kind.ASYNC) {
                a.cancelled |= a.future.cancel(true);
            } else if (a.kind == Kind.BLOCKING && !a.future.isDone()) {
                a.interrupted = true;
                a.interruptNanos = System.nanoTime();
                a.thread.interrupt();
            }
        }
        try {
            soon().atMost(Duration.ofSeconds(20)).until(() -> open.stream()
                    .filter(a -> a.party.alive()).allMatch(a -> a.future.isDone()));
        } catch (ConditionTimeoutException e) {
            fail("acquisitions did not end within 20 s of being cancelled or interrupted: "
                    + open.stream().filter(a -> a.party.alive() && !a.future.isDone()).toList());
        }
        poll();
        for (Held h : List.copyOf(permits)) {
            if (h.party().alive() && !h.released) {
                release(h);
            }
        }
        if (override != 0) {
            slots[0].semaphore.clearLimitOverride();
            endOverrides(serverMs());
            override = 0;
        }
        afterStep();

        operation = "end: no live registry's entry may remain";
        remember(operation);
        try {
            soon().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                    .until(() -> liveEntries(snapshot()).isEmpty());
        } catch (ConditionTimeoutException e) {
            ModelSnapshot s = snapshot();
            fail("after every wait ended and every permit was released, Redis still has entries of live "
                    + "registries (a leak, until their lease or heartbeat ends): " + liveEntries(s) + "\n"
                    + s.describe());
        }

        operation = "end: close the registries, let the dead parties' entries run out";
        remember(operation);
        for (int i = 0; i < SLOTS; i++) {
            close(slots[i]);
        }
        afterStep();
        ModelSnapshot s = snapshot();
        long latest = s.nowMs();
        for (long deadline : s.holders().values()) {
            latest = Math.max(latest, deadline);
        }
        for (long deadline : s.queueDeadline().values()) {
            latest = Math.max(latest, deadline);
        }
        try {
            soon().atMost(Duration.ofMillis(latest - s.nowMs() + 5000)).pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        ModelSnapshot now = snapshot();
                        return now.holders().values().stream().allMatch(d -> d < now.nowMs())
                                && now.queueDeadline().values().stream().allMatch(d -> d < now.nowMs());
                    });
        } catch (ConditionTimeoutException e) {
            fail("entries outlived their deadlines\n" + snapshot().describe());
        }

        operation = "end: a fresh registry's state()";
        remember(operation);
        LettuceConnectionFactory factory = server.connectionFactory();
        try (SemaphoreRegistry fresh = SemaphoreRegistry.builder(factory).keyPrefix(PREFIX)
                .defaults(new SemaphoreSettings(5, Duration.ofSeconds(1), Duration.ZERO, true, true))
                .waiterTick(TICK).waiterHeartbeat(HEARTBEAT).build()) {
            SemaphoreState state = fresh.semaphore(NAME).state();
            check(state.used() == 0 && state.holders().isEmpty() && state.waiters().isEmpty(),
                    () -> "after everything ended, state() still shows something: " + state);
        } finally {
            factory.destroy();
        }
        ModelSnapshot last = snapshot();
        List<String> problems = new ArrayList<>();
        structural(last, problems);
        check(problems.isEmpty(), () -> "final snapshot: " + problems + "\n" + last.describe());
        check(last.holders().isEmpty() && last.queue().isEmpty() && last.rawInfo().isEmpty()
                        && (last.stateNumber("used") == null || last.stateNumber("used") == 0),
                () -> "after state() purged, entries remain\n" + last.describe());
        poll();
        for (Acq a : open) {
            check(a.party.life == Life.HALTED,
                    () -> "acquisition " + a + " of a registry that was not halted never ended");
        }
    }

    private void tearDown() {
        for (Party p : parties) {
            if (p.alive()) {
                try {
                    p.registry.close();
                } catch (RuntimeException e) {
                    // the test failed already; the server goes with the test
                }
            }
        }
        for (Acq a : open) {
            if (a.thread != null && a.thread.isAlive()) {
                a.thread.interrupt();
            }
        }
        for (Party p : parties) {
            if (p.factory != null) {
                try {
                    p.factory.destroy();
                } catch (RuntimeException e) {
                    // destroyed already
                }
            }
        }
        if (observerConnection != null) {
            observerConnection.close();
        }
        if (observerClient != null) {
            observerClient.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Operations

    private String perform(Op op, Random r) throws Exception {
        return switch (op) {
            case ACQUIRE_NOW -> acquireNow(r);
            case ACQUIRE_SHORT_WAIT -> acquireAsync(r, 100 + r.nextInt(1400));
            case ACQUIRE_LONG_WAIT -> acquireAsync(r, 2000 + r.nextInt(13000));
            case ACQUIRE_BLOCKING -> acquireBlocking(r);
            case CANCEL -> cancel(r);
            case INTERRUPT -> interrupt(r);
            case RELEASE -> releaseOne(r);
            case RELEASE_AGAIN -> releaseAgain(r);
            case RELEASE_PART -> releasePart(r);
            case RAW_RENEW -> rawRenew(r);
            case RAW_REPEATED_ACQUIRE -> rawRepeatedAcquire(r);
            case RAW_CANCEL_UNKNOWN -> rawCancelUnknown(r);
            case RAW_CANCEL_WAITER -> rawCancelWaiter(r);
            case PHANTOM -> phantom(r);
            case PHANTOM_COMES_BACK -> phantomComesBack(r);
            case PHANTOM_SWEEPS -> phantomSweeps(r);
            case STATE -> state(r);
            case PAUSE -> pause(r);
            case HALT -> halt(r);
            case CLOSE_AND_RECONFIGURE -> closeAndReconfigure(r);
            case FLUSHALL -> flushAll();
            case RESTART -> restart(r, false);
            case KILL -> restart(r, true);
            case OVERRIDE -> override(r);
        };
    }

    /** Sets (two times in three) or clears the runtime limit through a live registry. */
    private String override(Random r) {
        Party p = slots[r.nextInt(SLOTS)];
        int limit = r.nextInt(3) == 0 ? 0 : 1 + r.nextInt(6);
        if (!redisUp) {
            return "override: Redis down";
        }
        long start = System.nanoTime();
        long before = serverMs();
        try {
            if (limit == 0) {
                p.semaphore.clearLimitOverride();
            } else {
                p.semaphore.overrideLimit(limit);
            }
        } catch (SemaphoreUnavailableException e) {
            check(outageOverlaps(start, System.nanoTime()),
                    () -> "override " + limit + " via " + p + " failed while Redis was up: " + trace(e));
            // It may have reached Redis: the new limit may apply from now on, and the old one too.
            if (limit > 0) {
                overrides.add(new long[] {limit, before, Long.MAX_VALUE});
            }
            override = -1;
            return "override " + limit + " via " + p.label + ": failed";
        }
        endOverrides(serverMs());
        if (limit > 0) {
            overrides.add(new long[] {limit, before, Long.MAX_VALUE});
        }
        override = limit;
        return limit == 0 ? "clear the runtime limit via " + p.label : "runtime limit " + limit + " via " + p.label;
    }

    /** The runtime limits in force end at {@code atMs}: replaced, cleared or wiped. */
    private void endOverrides(long atMs) {
        for (long[] o : overrides) {
            if (o[2] == Long.MAX_VALUE) {
                o[2] = atMs;
            }
        }
    }

    private String acquireNow(Random r) {
        Party p = slots[r.nextInt(SLOTS)];
        int count = permitsToAsk(r, p.limit);
        boolean viaTry = r.nextInt(4) == 0;
        Acq a = new Acq(++acqNo, p, Kind.NOW, viaTry ? 1 : count, Duration.ZERO, tokenFloor);
        a.holdMs = holdFor(r);
        CompletableFuture<Permit> future;
        if (viaTry) {
            CompletableFuture<Permit> answer = new CompletableFuture<>();
            try {
                Optional<Permit> permit = p.semaphore.tryAcquire();
                permit.ifPresentOrElse(answer::complete,
                        () -> answer.completeExceptionally(new SemaphoreRejectedException(NAME, 1, Duration.ZERO)));
            } catch (RuntimeException e) {
                answer.completeExceptionally(e);
            }
            future = answer;
        } else {
            // acquireAsync never blocks its caller: a zero wait is answered by its one call's reply.
            future = p.semaphore.acquireAsync(a.count, Duration.ZERO);
            try {
                future.get(ZERO_WAIT_ANSWER.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // the outcome is checked where every acquisition's is; a timeout fails below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        a.immediate = future.isDone();
        a.watch(future);
        open.add(a);
        check(a.immediate, () -> a + ": a zero wait was not answered within " + ZERO_WAIT_ANSWER);
        return "acquire now " + a;
    }

    private String acquireAsync(Random r, long waitMs) {
        Party p = slots[r.nextInt(SLOTS)];
        int count = permitsToAsk(r, p.limit);
        long holdMs = holdFor(r);
        if (openWaits() >= MAX_OPEN_WAITS) {
            return "acquire with wait skipped: " + openWaits() + " waits open";
        }
        Acq a = new Acq(++acqNo, p, Kind.ASYNC, count, Duration.ofMillis(waitMs), tokenFloor);
        a.holdMs = holdMs;
        CompletableFuture<Permit> future = p.semaphore.acquireAsync(count, a.maxWait);
        a.immediate = future.isDone();
        a.watch(future);
        open.add(a);
        return "acquireAsync " + a + (a.immediate ? " (answered at once)" : "");
    }

    private String acquireBlocking(Random r) {
        Party p = slots[r.nextInt(SLOTS)];
        int count = permitsToAsk(r, p.limit);
        long waitMs = 300 + r.nextInt(8000);
        long holdMs = holdFor(r);
        long blocked = open.stream()
                .filter(a -> a.kind == Kind.BLOCKING && a.party.alive() && !a.future.isDone()).count();
        if (openWaits() >= MAX_OPEN_WAITS || blocked >= MAX_BLOCKED_THREADS) {
            return "blocking acquire skipped";
        }
        Acq a = new Acq(++acqNo, p, Kind.BLOCKING, count, Duration.ofMillis(waitMs), tokenFloor);
        a.holdMs = holdMs;
        CompletableFuture<Permit> answer = new CompletableFuture<>();
        a.watch(answer);
        Thread thread = new Thread(() -> {
            try {
                if (a.no % 2 == 0) {
                    // the core's own rejection, which tells its reason
                    answer.complete(p.semaphore.acquire(count, a.maxWait));
                } else {
                    Optional<Permit> permit = p.semaphore.tryAcquire(count, a.maxWait);
                    permit.ifPresentOrElse(answer::complete, () -> answer.completeExceptionally(
                            new SemaphoreRejectedException(NAME, count, a.maxWait, UNTOLD, null, UNTOLD_WHY)));
                }
            } catch (Throwable e) {
                answer.completeExceptionally(e);
            }
        }, "model-blocking-" + a.no);
        thread.setDaemon(true);
        a.thread = thread;
        open.add(a);
        thread.start();
        return "blocking tryAcquire " + a;
    }

    private String cancel(Random r) {
        List<Acq> candidates = open.stream()
                .filter(a -> a.kind == Kind.ASYNC && a.party.alive() && !a.future.isDone()).toList();
        if (candidates.isEmpty()) {
            return "cancel: no open wait";
        }
        Acq a = candidates.get(r.nextInt(candidates.size()));
        a.cancelled = a.future.cancel(true);
        return "cancel " + a + (a.cancelled ? "" : " (had ended)");
    }

    private String interrupt(Random r) {
        List<Acq> candidates = open.stream()
                .filter(a -> a.kind == Kind.BLOCKING && a.party.alive() && !a.future.isDone() && !a.interrupted)
                .toList();
        if (candidates.isEmpty()) {
            return "interrupt: no blocked thread";
        }
        Acq a = candidates.get(r.nextInt(candidates.size()));
        a.interrupted = true;
        a.interruptNanos = System.nanoTime();
        a.thread.interrupt();
        return "interrupt " + a;
    }

    private String releaseOne(Random r) {
        long now = System.nanoTime();
        List<Held> candidates = permits.stream().filter(h -> h.party().alive() && !h.released
                && (now - h.acq.completedNanos >= h.acq.holdMs * 1_000_000 || !h.permit.isHeld())).toList();
        if (candidates.isEmpty()) {
            return "release: nothing held long enough";
        }
        Held h = candidates.get(r.nextInt(candidates.size()));
        release(h);
        return "release " + h + (h.releaseEffective ? "" : " (no longer held)");
    }

    private void release(Held h) {
        boolean held = h.permit.isHeld();
        h.releaseNanos = System.nanoTime();
        h.permit.release();
        h.released = true;
        h.releaseEffective = held && redisUp;
        permits.remove(h);
        releasedPermits.add(h);
        justReleased.add(h);
    }

    private String releaseAgain(Random r) {
        if (releasedPermits.isEmpty()) {
            return "release again: nothing released yet";
        }
        Held h = releasedPermits.get(r.nextInt(releasedPermits.size()));
        h.permit.release();
        h.permit.close();
        check(!h.permit.isHeld(), () -> h + " is held after being released");
        if (!redisUp) {
            return "release again " + h + " (client only, Redis is down)";
        }
        Party via = slots[r.nextInt(SLOTS)];
        ReleaseScript.Released reply = rawCall(() -> raw.release(keys, via.limit, h.permit.id()));
        if (reply != null && h.releaseEffective && !outageSince(h.releaseNanos)) {
            check(!reply.released(), () -> "the release script released " + h + " a second time");
        }
        return "release again " + h + " and once more through the script: "
                + (reply == null ? "failed" : reply.released());
    }

    /** Gives back part of a multi-permit lease: it keeps its id and token, and its count goes down in Redis too. */
    private String releasePart(Random r) {
        List<Held> candidates = permits.stream()
                .filter(h -> h.party().alive() && !h.released && h.permit.count() > 1).toList();
        if (candidates.isEmpty()) {
            return "release part: no multi-permit lease held";
        }
        Held h = candidates.get(r.nextInt(candidates.size()));
        int before = h.permit.count();
        int part = 1 + r.nextInt(before - 1);
        try {
            h.permit.release(part);
        } catch (IllegalStateException e) {
            check(!h.permit.isHeld(), () -> "release(" + part + ") of " + h + " refused, yet it is held: " + e);
            count("release part: no longer held");
            return "release " + part + " of " + before + " of " + h + ": no longer held";
        }
        check(h.permit.count() == before - part, () -> h + " holds " + h.permit.count() + " after giving back "
                + part + " of " + before);
        count("release part");
        return "release " + part + " of " + before + " of " + h;
    }

    private String rawRenew(Random r) {
        if (!redisUp) {
            return "renew: Redis down";
        }
        Party via = slots[r.nextInt(SLOTS)];
        List<String> ids = new ArrayList<>();
        List<Long> expected = new ArrayList<>();
        List<String> why = new ArrayList<>();
        List<Held> held = believedHeld();
        for (int i = 0, n = r.nextInt(3); i < n && !held.isEmpty(); i++) {
            Held h = held.get(r.nextInt(held.size()));
            if (h.permit.isHeld() && !ids.contains(h.permit.id())) {
                ids.add(h.permit.id());
                // Renewed only by its own JVM: to another, it is a lease that JVM does not own.
                expected.add(h.party() == via ? h.token : RenewScript.Renewed.ADOPTED);
                why.add("held " + h + (h.party() == via ? "" : " (another JVM's)"));
            }
        }
        List<Held> gone = releasedForGood();
        if (!gone.isEmpty() && r.nextBoolean()) {
            Held h = gone.get(r.nextInt(gone.size()));
            if (!ids.contains(h.permit.id())) {
                ids.add(h.permit.id());
                expected.add(-1L);
                why.add("released " + h);
            }
        }
        List<String> waiters = liveWaiters();
        for (int i = 0, n = r.nextInt(3); i < n && !waiters.isEmpty(); i++) {
            String id = waiters.get(r.nextInt(waiters.size()));
            if (!ids.contains(id)) {
                ids.add(id);
                expected.add(null);
                why.add("waiter " + id);
            }
        }
        ids.add("unknown-" + Long.toHexString(r.nextLong()));
        expected.add(-1L);
        why.add("unknown id");
        RenewScript.Renewed reply = rawCall(() -> raw.renew(keys, via.limit, HEARTBEAT, via.inbox, ids));
        if (reply != null) {
            for (int i = 0; i < ids.size(); i++) {
                Long want = expected.get(i);
                long got = reply.statuses().get(i);
                int index = i;
                check(want == null || (want == -1 ? got == -1 : got == want),
                        () -> "renew of " + why.get(index) + " answered " + got + ", expected " + want);
                if (want != null && want > 0) {
                    fullLease.put(ids.get(i), atMs(reply.usage()) + permitsById.get(ids.get(i)).party().leaseMs);
                }
            }
        }
        return "renew through the script " + why;
    }

    private String rawRepeatedAcquire(Random r) {
        boolean wait = r.nextBoolean();
        List<Held> held = believedHeld();
        if (!redisUp || held.isEmpty()) {
            return "repeated acquire: nothing held";
        }
        Held h = held.get(r.nextInt(held.size()));
        Party p = h.party();
        if (!h.permit.isHeld()) {
            // Not held any more: a repeated acquire would be a new acquisition nobody waits for.
            return "repeated acquire: " + h + " is no longer held";
        }
        Acquired reply = rawCall(() -> raw.acquire(keys, p.limit, h.permit.id(), h.permit.count(),
                Duration.ofMillis(p.leaseMs), wait, p.fair, HEARTBEAT, p.inbox, "model-repeat"));
        if (reply != null) {
            check(reply.status() == Acquired.Status.GRANTED && reply.token() == h.token,
                    () -> "a repeated acquire of held " + h + " answered " + reply.status() + " with token "
                            + reply.token());
            // "its lease confirmed in full"
            fullLease.put(h.permit.id(), atMs(reply.usage()) + p.leaseMs);
        }
        return "repeated acquire of " + h;
    }

    private String rawCancelUnknown(Random r) {
        boolean give = r.nextBoolean();
        Party via = slots[r.nextInt(SLOTS)];
        List<Held> gone = releasedForGood();
        String id;
        String what;
        if (!gone.isEmpty() && r.nextBoolean()) {
            Held h = gone.get(r.nextInt(gone.size()));
            id = h.permit.id();
            what = "released " + h;
        } else {
            id = "unknown-" + Long.toHexString(r.nextLong());
            what = "unknown id " + id;
        }
        if (!redisUp) {
            return "cancel: Redis down";
        }
        CancelScript.Cancelled reply = rawCall(() -> raw.cancel(keys, via.limit, id, give));
        if (reply != null) {
            check(reply.grantedToken() == 0, () -> "cancel of " + what + " answered token " + reply.grantedToken());
        }
        return "cancel through the script (release " + give + ") of " + what;
    }

    private String rawCancelWaiter(Random r) {
        Party via = slots[r.nextInt(SLOTS)];
        List<String> waiters = liveWaiters();
        int pick = r.nextInt(1000);
        if (!redisUp || waiters.isEmpty()) {
            return "cancel of a waiter: none";
        }
        String id = waiters.get(pick % waiters.size());
        CancelScript.Cancelled reply = rawCall(() -> raw.cancel(keys, via.limit, id, false));
        if (reply != null && reply.grantedToken() > 0) {
            // granted meanwhile: cancel without release confirms the claim as a full lease
            fullLease.put(id, atMs(reply.usage()) + byInbox.get(current.info().get(id).inbox()).leaseMs);
        }
        return "cancel through the script of live waiter " + id + " (it must re-join): "
                + (reply == null ? "failed" : "token " + reply.grantedToken());
    }

    private String phantom(Random r) {
        Party via = slots[r.nextInt(SLOTS)];
        int count = permitsToAsk(r, via.limit);
        long lease = new long[] {300, 800, 1500, 4000}[r.nextInt(4)];
        boolean wait = r.nextInt(10) < 7;
        boolean fair = r.nextBoolean();
        long heartbeat = r.nextBoolean() ? 1000 : 2000;
        if (!redisUp) {
            return "phantom: Redis down";
        }
        int no = ++phantomNo;
        String inbox = PREFIX + ":inbox:phantom-" + no;
        String id = "phantom-" + no;
        Acquired reply = rawCall(() -> raw.acquire(keys, via.limit, id, count, Duration.ofMillis(lease), wait, fair,
                Duration.ofMillis(heartbeat), inbox, "phantom"));
        if (reply == null) {
            return "phantom: call failed";
        }
        long at = reply.usage().serverMicros() / 1000;
        Party phantom = new Party("P" + no, inbox, via.limit, lease, heartbeat, fair, false, null, null, null, at,
                Life.PHANTOM);
        phantom.liveToMs = at;
        phantom.deathMs = at;
        phantom.deathSlackMs = PHANTOM_SLACK_MS;
        parties.add(phantom);
        byInbox.put(inbox, phantom);
        if (reply.status() != Acquired.Status.REFUSED) {
            check(reply.token() > tokenFloor, () -> "phantom " + id + " got token/ticket " + reply.token()
                    + ", not above " + tokenFloor + " seen before");
        }
        return "phantom " + phantom + " asks " + count + (wait ? ", waits" : "") + ": " + reply.status();
    }

    /**
     * A phantom's JVM comes back for one call: release, cancel with release (both give back: the
     * entry must be gone after the call, but a release leaves a waiter in the queue), or cancel
     * without release (a waiter that gives up but takes a grant that crossed it: that grant's claim
     * becomes a full lease, and the phantom's death moves to this call).
     */
    private String phantomComesBack(Random r) {
        int mode = r.nextInt(3);
        int pick = r.nextInt(1000);
        Party via = slots[r.nextInt(SLOTS)];
        if (!redisUp || current == null) {
            return "phantom comes back: Redis down";
        }
        ModelSnapshot s = current;
        List<String> ids = new ArrayList<>();
        s.holders().keySet().forEach(ids::add);
        s.queue().keySet().forEach(ids::add);
        ids.removeIf(id -> phantomOf(s, id) == null);
        if (ids.isEmpty()) {
            return "phantom comes back: no phantom entry";
        }
        String id = ids.get(pick % ids.size());
        Party phantom = phantomOf(s, id);
        ModelSnapshot.Info info = s.info().get(id);
        Long deadline = s.holders().get(id);
        // still held when the call runs, unless the machine stalls for half a second
        boolean surelyHeld = deadline != null && deadline > serverMs() + 500;
        String answer;
        if (mode == 0) {
            ReleaseScript.Released reply = rawCall(() -> raw.release(keys, via.limit, id));
            answer = reply == null ? "failed" : "released " + reply.released();
            if (reply != null && surelyHeld) {
                check(reply.released(), () -> "release of held phantom " + id + " answered 0");
            }
            if (deadline != null) {
                // a release leaves a waiter where it is (it holds nothing); a holder never waits again
                mustBeGone.add(id);
            }
        } else {
            boolean give = mode == 1;
            CancelScript.Cancelled reply = rawCall(() -> raw.cancel(keys, via.limit, id, give));
            answer = reply == null ? "failed" : "token " + reply.grantedToken();
            if (reply != null && surelyHeld) {
                check(reply.grantedToken() == info.token(), () -> "cancel of held phantom " + id
                        + " answered token " + reply.grantedToken() + ", not its token " + info.token());
            }
            if (reply != null && !give && reply.grantedToken() > 0) {
                long at = atMs(reply.usage());
                phantom.deathMs = Math.max(phantom.deathMs, at);
                fullLease.put(id, at + phantom.leaseMs);
                count("phantom keeps a grant through cancel");
            } else {
                mustBeGone.add(id);
            }
        }
        count(deadline != null ? "phantom holder comes back" : "phantom waiter comes back");
        return "phantom " + (deadline != null ? "holder " : "waiter ") + id + " comes back: "
                + new String[] {"release", "cancel (release)", "cancel (keep)"}[mode] + ": " + answer;
    }

    /**
     * A phantom's JVM comes back with the renew of a JVM that reached a new master (renew.lua, S1,
     * S2): it names some of its leases for renewal, spares some, and sends a watermark above all its
     * tokens, at one of them, or below all. Exactly its unnamed leases whose token is below
     * min(watermark, server time - 1 s) end (they must be gone at the next check); every other
     * lease of it, named or newer, and every waiter stays while its deadline has not passed.
     */
    private String phantomSweeps(Random r) {
        Party via = slots[r.nextInt(SLOTS)];
        if (!redisUp || current == null) {
            return "phantom sweeps: Redis down";
        }
        ModelSnapshot s = current;
        List<Party> phantoms = s.holders().keySet().stream().map(id -> phantomOf(s, id))
                .filter(java.util.Objects::nonNull).distinct().toList();
        if (phantoms.isEmpty()) {
            return "phantom sweeps: no phantom holder";
        }
        Party phantom = phantoms.get(r.nextInt(phantoms.size()));
        List<String> own = s.holders().keySet().stream().filter(id -> phantomOf(s, id) == phantom).toList();
        List<String> waiting = s.queue().keySet().stream().filter(id -> phantomOf(s, id) == phantom).toList();
        List<String> renewed = new ArrayList<>();
        List<String> spared = new ArrayList<>();
        for (String id : own) {
            switch (r.nextInt(3)) {
                case 0 -> renewed.add(id);
                case 1 -> spared.add(id);
                default -> { }
            }
        }
        long watermark = switch (r.nextInt(3)) {
            case 0 -> s.nowUs() + 10_000_000L;
            case 1 -> s.info().get(own.get(r.nextInt(own.size()))).token();
            default -> 1;
        };
        RenewScript.Renewed reply = rawCall(() -> raw.renew(keys, via.limit, HEARTBEAT, phantom.inbox, renewed,
                spared, watermark));
        if (reply == null) {
            return "phantom sweeps: call failed";
        }
        long nowMs = atMs(reply.usage());
        long below = Math.min(watermark, reply.usage().serverMicros() - 1_000_000L);
        ModelSnapshot after = snapshot();
        int sure = 0;
        int maybe = 0;
        for (String id : own) {
            long deadline = s.holders().get(id);
            boolean ends = !renewed.contains(id) && !spared.contains(id) && s.info().get(id).token() < below;
            if (ends) {
                mustBeGone.add(id);
                if (deadline > nowMs) {
                    sure++;
                } else {
                    maybe++;
                }
            } else {
                // A renewal extends only a lease still there when it runs: the snapshot it was chosen
                // from may be older than the lease on a busy machine. What it kept must last until
                // the snapshot after it (unless that snapshot came too late even for the new lease).
                boolean renewedNow = renewed.contains(id) && reply.statuses().get(renewed.indexOf(id)) > 0;
                if (renewed.contains(id) && !renewedNow) {
                    check(deadline <= nowMs + CLOCK_TOLERANCE_MS, () -> "the renewal of " + id + " by " + phantom
                            + " found it gone although its lease ran " + (deadline - nowMs) + " ms more");
                }
                long lastsUntil = renewedNow ? nowMs + phantom.leaseMs : deadline;
                if (lastsUntil > after.nowMs() + CLOCK_TOLERANCE_MS) {
                    check(after.holders().containsKey(id), () -> "the sweep of " + phantom + " (watermark "
                            + watermark + ", below " + below + ") ended " + id + " (token " + s.info().get(id).token()
                            + ", " + (renewedNow ? "renewed" : spared.contains(id) ? "spared" : "newer") + ")");
                }
            }
        }
        for (String id : waiting) {
            Long deadline = s.queueDeadline().get(id);
            if (deadline != null && deadline > after.nowMs() + CLOCK_TOLERANCE_MS) {
                check(after.queue().containsKey(id) || after.holders().containsKey(id),
                        () -> "the sweep of " + phantom + " ended its waiter " + id);
            }
        }
        int ended = reply.swept();
        int most = sure + maybe + waiting.size();
        int least = sure;
        check(ended >= least && ended <= most, () -> "the sweep of " + phantom + " ended " + ended
                + " leases, expected " + least + ".." + most);
        for (int i = 0; i < renewed.size(); i++) {
            if (reply.statuses().get(i) > 0) {
                phantom.deathMs = Math.max(phantom.deathMs, nowMs);
                fullLease.put(renewed.get(i), nowMs + phantom.leaseMs);
            }
        }
        count(ended > 0 ? "phantom sweep ended a lease" : "phantom sweep ended nothing");
        return "phantom " + phantom + " sweeps (watermark " + watermark + ", renews " + renewed + ", spares " + spared
                + "): ended " + ended;
    }

    private Party phantomOf(ModelSnapshot s, String id) {
        ModelSnapshot.Info info = s.info().get(id);
        Party p = info == null ? null : byInbox.get(info.inbox());
        return p == null || p.life != Life.PHANTOM ? null : p;
    }

    private String state(Random r) {
        Party p = slots[r.nextInt(SLOTS)];
        if (!redisUp) {
            return "state: Redis down";
        }
        long start = System.nanoTime();
        long before = serverMs();
        SemaphoreState state;
        try {
            state = p.semaphore.state();
            purgedBefore = before;
        } catch (SemaphoreUnavailableException e) {
            check(outageOverlaps(start, System.nanoTime()),
                    () -> "state() of " + p + " failed while Redis was up: " + e);
            return "state: failed";
        }
        int sum = state.holders().stream().mapToInt(SemaphoreState.Holder::count).sum();
        int limit = override > 0 ? override : p.limit;
        String source = override > 0 ? SemaphoreState.OVERRIDE : SemaphoreState.CONFIGURED;
        check(state.used() == sum && state.available() == Math.max(state.limit() - sum, 0)
                        && state.configuredLimit() == p.limit
                        && (override < 0 || state.limit() == limit && state.limitSource().equals(source)),
                () -> "state() of " + p + " is inconsistent (runtime limit " + override + "): " + state);
        check(state.holders().stream().map(SemaphoreState.Holder::permitId).distinct().count() == state.holders().size()
                        && state.waiters().stream().map(SemaphoreState.Waiter::waiterId).distinct().count()
                        == state.waiters().size(),
                () -> "state() lists an id twice: " + state);
        return "state() via " + p.label + ": used " + state.used() + ", " + state.waiters().size() + " waiting";
    }

    private String pause(Random r) throws InterruptedException {
        long ms = r.nextInt(25) == 0 ? 400 + r.nextInt(1000) : 5 + r.nextInt(115);
        Thread.sleep(ms);
        spent.merge("PAUSE (asked)", ms, Long::sum);
        return "pause " + ms + " ms";
    }

    private String halt(Random r) {
        int slot = r.nextInt(SLOTS);
        Random next = new Random(r.nextLong());
        if (!redisUp) {
            return "halt: Redis down";
        }
        Party p = slots[slot];
        long at = serverMs();
        Engines.halt(p.registry);
        // A JVM that dies takes its connections with it.
        p.factory.destroy();
        p.life = Life.HALTED;
        p.deathMs = at;
        p.deathSlackMs = DEAD_SLACK_MS;
        p.liveToMs = serverMs();
        slots[slot] = newRegistry(next, r.nextBoolean());
        return "halt " + p + ", replaced by " + slots[slot];
    }

    private String closeAndReconfigure(Random r) {
        int slot = r.nextInt(SLOTS);
        Random next = new Random(r.nextLong());
        if (!redisUp) {
            return "close: Redis down";
        }
        Party p = slots[slot];
        close(p);
        slots[slot] = newRegistry(next, true);
        return "close " + p + ", replaced by " + slots[slot];
    }

    private void close(Party p) {
        p.registry.close();
        p.life = Life.CLOSED;
        p.liveToMs = serverMs();
        p.deathMs = p.liveToMs;
        p.deathSlackMs = DEAD_SLACK_MS;
        try {
            soon().atMost(Duration.ofSeconds(5)).until(() -> open.stream()
                    .filter(a -> a.party == p).allMatch(a -> a.future.isDone()));
        } catch (ConditionTimeoutException e) {
            fail("close() of " + p + " left acquisitions unanswered: "
                    + open.stream().filter(a -> a.party == p && !a.future.isDone()).toList());
        }
        if (!outageOverlaps(System.nanoTime() - Duration.ofSeconds(3).toNanos(), System.nanoTime())) {
            try {
                soon().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(50))
                        .until(() -> entriesOf(snapshot(), p).isEmpty());
            } catch (ConditionTimeoutException e) {
                ModelSnapshot s = snapshot();
                fail("3 s after close() of " + p + ", Redis still has its entries " + entriesOf(s, p)
                        + " (they end with their lease or heartbeat)\n" + s.describe());
            }
        }
        p.factory.destroy();
    }

    private String flushAll() {
        if (!redisUp) {
            return "flushall: Redis down";
        }
        server.flushAll();
        dataLossEndUs = serverUs();
        endOverrides(dataLossEndUs / 1000);
        override = 0;
        return "FLUSHALL";
    }

    private String restart(Random r, boolean kill) throws InterruptedException {
        boolean callWhileDown = r.nextInt(10) < 3;
        Party p = slots[r.nextInt(SLOTS)];
        long downMs = r.nextInt(700);
        long start = System.nanoTime();
        if (kill) {
            server.kill();
        } else {
            server.stop();
        }
        redisUp = false;
        String during = "";
        if (callWhileDown) {
            Acq a = new Acq(++acqNo, p, Kind.NOW, 1, Duration.ZERO, tokenFloor);
            CompletableFuture<Permit> future = p.semaphore.acquireAsync(1, Duration.ZERO);
            // Answered by its one call: failed within the command timeout.
            Throwable failure;
            try {
                failure = future.handle((permit, error) -> error)
                        .get(ZERO_WAIT_ANSWER.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                failure = null;
            }
            a.immediate = future.isDone();
            a.watch(future);
            open.add(a);
            Throwable failed = failure;
            check(a.immediate && failed instanceof SemaphoreUnavailableException,
                    () -> a + " while Redis was down: expected SemaphoreUnavailableException within the command"
                            + " timeout, got "
                            + (future.isDone() ? String.valueOf(future.handle((x, e) -> e == null ? x : e).join())
                                    : "no answer"));
            during = ", " + a + " failed as expected";
        }
        Thread.sleep(downMs);
        server.start();
        redisUp = true;
        outages.add(new long[] {start, System.nanoTime()});
        dataLossEndUs = serverUs();
        endOverrides(dataLossEndUs / 1000);
        override = 0;
        return (kill ? "kill -9 and start Redis" : "restart Redis") + ", down " + downMs + " ms" + during;
    }

    // ---------------------------------------------------------------------------------------------
    // Parties

    private Party newRegistry(Random r, boolean anyLimit) {
        int limit = anyLimit ? 1 + r.nextInt(5) : 2 + r.nextInt(3);
        int leaseChoice = weighted(r, LEASE_WEIGHTS);
        String leases = System.getProperty("model.leases");
        long lease = leases == null || leases.isBlank() ? LEASES[leaseChoice]
                : Long.parseLong(leases.split(",")[leaseChoice % leases.split(",").length].trim());
        boolean fair = r.nextInt(3) != 0;
        boolean autoRenew = r.nextInt(10) < 7;
        long from = serverMs();
        LettuceConnectionFactory factory = server.connectionFactory();
        // The queue's bound, drawn apart from the walk's randomness so a seed walks the same steps.
        int maxWaiters = boundRandom.nextInt(3) == 0 ? 0 : 1 + boundRandom.nextInt(5);
        SemaphoreSettings settings = new SemaphoreSettings(limit, Duration.ofMillis(lease), Duration.ZERO, fair,
                autoRenew).withMaxWaiters(maxWaiters);
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory)
                .keyPrefix(PREFIX).defaults(settings).waiterTick(TICK).waiterHeartbeat(HEARTBEAT).build();
        // The registry's inbox is the one channel no known party subscribed.
        Set<String> known = new HashSet<>(byInbox.keySet());
        String inbox;
        try {
            inbox = soon().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
                List<String> fresh = new ArrayList<>(observer.pubsubChannels(PREFIX + ":inbox:*"));
                fresh.removeAll(known);
                return fresh.size() == 1 ? fresh.get(0) : null;
            }, channel -> channel != null);
        } catch (ConditionTimeoutException e) {
            registry.close();
            throw new AssertionError("seed=" + seed + ": the inbox of a new registry did not show up", e);
        }
        Party p = new Party("R" + (++partyNo), inbox, limit, lease, HEARTBEAT_MS, fair, autoRenew, registry, factory,
                registry.semaphore(NAME), from, Life.ALIVE);
        p.maxWaiters = maxWaiters;
        parties.add(p);
        byInbox.put(inbox, p);
        return p;
    }

    /**
     * @return the largest limit of a party alive around server time {@code atMs}, or of a runtime
     *         limit set around it; only the runtime limits when one was set all the time around it
     */
    private int limitAround(long atMs) {
        long from = atMs - LIMIT_WINDOW_MS;
        long to = sat(atMs + LIMIT_WINDOW_MS);
        int bound = 0;
        long covered = from;
        for (long[] o : overrides) {
            if (o[1] <= to && o[2] >= from) {
                bound = Math.max(bound, (int) o[0]);
            }
            if (o[1] <= covered) {
                covered = Math.max(covered, o[2]);
            }
        }
        if (covered >= to) {
            return bound;
        }
        for (Party p : parties) {
            if (p.liveFromMs - LIMIT_WINDOW_MS <= atMs && atMs <= sat(p.liveToMs + LIMIT_WINDOW_MS)) {
                bound = Math.max(bound, p.limit);
            }
        }
        return bound;
    }

    private static long sat(long value) {
        return value < 0 ? Long.MAX_VALUE : value;
    }

    // ---------------------------------------------------------------------------------------------
    // After every step: outcomes, snapshot, invariants

    private void afterStep() {
        poll();
        if (!redisUp) {
            return;
        }
        ModelSnapshot s = snapshot();
        current = s;
        List<String> problems = new ArrayList<>();
        structural(s, problems);
        parties(s, problems);
        progress(s, problems);
        fairArrivals(s, problems);
        queueBound(s, problems);
        clientView(s, problems);
        check(problems.isEmpty(), () -> String.join("\n", problems) + "\nsnapshot:\n" + s.describe());
        hangs();
        previous = s;
        for (Map.Entry<String, Long> e : s.holders().entrySet()) {
            ModelSnapshot.Info info = s.info().get(e.getKey());
            if (info != null) {
                tokenFloor = Math.max(tokenFloor, info.token());
            }
        }
        for (long ticket : s.queue().values()) {
            tokenFloor = Math.max(tokenFloor, ticket);
        }
    }

    /** Collects the answers of acquisitions that ended. */
    private void poll() {
        for (Acq a : List.copyOf(open)) {
            if (a.future.isDone()) {
                open.remove(a);
                outcome(a);
            }
        }
    }

    private void outcome(Acq a) {
        if (a.completedNanos == 0) {
            // the completion callback runs right after isDone turns true
            soon().atMost(Duration.ofSeconds(5)).until(() -> a.completedNanos != 0);
        }
        Permit permit = null;
        Throwable error = null;
        try {
            permit = a.future.join();
        } catch (CancellationException e) {
            error = e;
        } catch (CompletionException e) {
            error = e.getCause();
        }
        if (permit != null) {
            granted(a, permit);
            return;
        }
        Throwable failure = error;
        long elapsed = a.completedNanos - a.startNanos;
        if (failure instanceof CancellationException) {
            count("cancelled");
            check(a.cancelled, () -> a + " was cancelled, but not by the walk: " + trace(failure));
        } else if (failure instanceof SemaphoreRejectedException rejected
                && rejected.reason() == SemaphoreRejectedException.Reason.QUEUE_FULL) {
            // Q1: refused at once, by a bounded party only (the snapshots check the bound itself).
            count("refused: queue full");
            check(a.kind != Kind.NOW && a.party.maxWaiters > 0, () -> a + " was refused as queue full, but "
                    + a.party + " has no bound, or did not wait");
        } else if (failure instanceof SemaphoreRejectedException rejected && rejected.getMessage().endsWith(UNTOLD_WHY)
                && a.party.maxWaiters > 0) {
            // tryAcquire's empty result does not say why: for a bounded party it may be a full queue.
            count("refused by tryAcquire of a bounded party");
        } else if (failure instanceof SemaphoreRejectedException) {
            count(a.kind == Kind.NOW ? "refused" : "timed out");
            if (a.kind != Kind.NOW && elapsed < a.maxWait.toNanos() - Duration.ofMillis(CLOCK_TOLERANCE_MS).toNanos()) {
                // Only a limit that shrank below the request ends a wait early (token 0), or a
                // runtime limit below it (refused at once).
                boolean smaller = parties.stream().anyMatch(p -> p.limit < a.count
                        && p.liveFromMs - LIMIT_WINDOW_MS <= a.completedWallMs
                        && sat(p.liveToMs + LIMIT_WINDOW_MS) >= a.startWallMs)
                        || overrides.stream().anyMatch(o -> o[0] < a.count
                        && o[1] - LIMIT_WINDOW_MS <= a.completedWallMs && sat(o[2] + LIMIT_WINDOW_MS) >= a.startWallMs);
                count("rejected early (a smaller limit)");
                check(smaller, () -> a + " was rejected after " + elapsed / 1_000_000
                        + " ms, before its wait ended, with no party of a limit below " + a.count + " around");
            }
        } else if (failure instanceof InterruptedException) {
            count("interrupted");
            check(a.kind == Kind.BLOCKING && a.interrupted, () -> a + " threw InterruptedException unasked");
        } else if (failure instanceof SemaphoreUnavailableException && a.interrupted && interruptedCall(failure)) {
            // An interrupt that lands while the thread is inside a Redis call (Lettuce gives up the
            // call) surfaces as SemaphoreUnavailableException, not InterruptedException. Tolerated
            // (no permit leaks: the library takes back what the call may have done) and counted.
            count("interrupt surfaced as SemaphoreUnavailableException");
        } else if (failure instanceof SemaphoreUnavailableException) {
            count("unavailable");
            check(!a.party.alive() || a.party.life == Life.HALTED || outageOverlaps(a.startNanos, a.completedNanos),
                    () -> a + " failed with SemaphoreUnavailableException while its registry was open and Redis up"
                            + " (no restart or kill overlapped it): " + trace(failure));
        } else {
            check(a.party.life == Life.HALTED, () -> a + " ended with an unexpected " + trace(failure));
        }
    }

    private void granted(Acq a, Permit permit) {
        count("granted");
        long token = permit.fencingToken();
        long heardLateMs = a.completedWallMs - token / 1000;
        Held h = new Held(permit, a, heardLateMs > HEARTBEAT_MS / 2 - 100);
        if (h.lateClaim) {
            count("grant heard > claim/2 late (not checked)");
        }
        check(permit.count() == a.count, () -> h + " holds " + permit.count() + " permits, asked " + a.count);
        check(token > 0 && tokens.add(token), () -> h + ": fencing token " + token + " is not positive or not unique");
        check(token > a.tokenFloor, () -> h + ": fencing token " + token + " is not above " + a.tokenFloor
                + ", a token or ticket in Redis before the acquisition started");
        check(!permitsById.containsKey(permit.id()), () -> h + ": a permit id handed out twice");
        permitsById.put(permit.id(), h);
        if (a.immediate) {
            grantedThisStep.add(a);
        }
        if (a.party.life == Life.CLOSED) {
            permit.release();
            return;
        }
        permits.add(h);
    }

    /** I1, I2, I4 and the bounds every entry keeps on its own. */
    private void structural(ModelSnapshot s, List<String> problems) {
        Long used = s.stateNumber("used");
        int held = s.heldCount();
        if (!s.holders().isEmpty()) {
            if (used == null || used != held) {
                problems.add("I1: state.used is " + used + " but the holders' counts sum to " + held);
            }
        } else if (used != null && used != 0) {
            problems.add("I1: no holder, but state.used is " + used);
        }
        if (!s.exists(1) && (s.exists(0) || s.exists(2))) {
            problems.add("the state key is gone while other keys exist");
        }
        for (Map.Entry<String, Long> e : s.holders().entrySet()) {
            String id = e.getKey();
            ModelSnapshot.Info info = s.info().get(id);
            if (info == null) {
                problems.add("I2: holder " + id + " has no (parsable) info: " + s.rawInfo().get(id));
                continue;
            }
            if (info.token() <= 0 || info.count() < 1) {
                problems.add("I2: holder " + id + " has info " + s.rawInfo().get(id));
            }
            if (s.queue().containsKey(id)) {
                problems.add("I2: " + id + " is both holder and waiter");
            }
            if (e.getValue() > s.nowMs() + Math.max(info.lease(), info.claim()) + PHANTOM_SLACK_MS) {
                problems.add("holder " + id + " has a deadline " + (e.getValue() - s.nowMs())
                        + " ms ahead, beyond its lease and claim: " + s.rawInfo().get(id));
            }
        }
        for (Map.Entry<String, Long> e : s.queue().entrySet()) {
            String id = e.getKey();
            ModelSnapshot.Info info = s.info().get(id);
            if (info == null) {
                problems.add("I2: waiter " + id + " has no (parsable) info: " + s.rawInfo().get(id));
                continue;
            }
            if (info.token() != 0 || info.count() < 1) {
                problems.add("I2: waiter " + id + " has info " + s.rawInfo().get(id));
            }
            Long heartbeat = s.queueDeadline().get(id);
            if (heartbeat != null && heartbeat > s.nowMs() + info.claim() + PHANTOM_SLACK_MS) {
                problems.add("waiter " + id + " has a heartbeat deadline " + (heartbeat - s.nowMs())
                        + " ms ahead, beyond its heartbeat " + info.claim());
            }
        }
        if (!s.queue().keySet().equals(s.queueDeadline().keySet())) {
            problems.add("I2: queue " + s.queue().keySet() + " and the waiters' deadlines " + s.queueDeadline().keySet()
                    + " differ");
        }
        for (String id : s.rawInfo().keySet()) {
            if (!s.holders().containsKey(id) && !s.queue().containsKey(id)) {
                problems.add("I2: orphan info entry " + id + " = " + s.rawInfo().get(id));
            }
        }
        long latest = Long.MIN_VALUE;
        for (long deadline : s.holders().values()) {
            latest = Math.max(latest, deadline);
        }
        for (long deadline : s.queueDeadline().values()) {
            latest = Math.max(latest, deadline);
        }
        if (latest > s.nowMs() + 9000) {
            count("check: a deadline over 9 s ahead");
        }
        for (int k = 0; k < ModelSnapshot.KEY_NAMES.size(); k++) {
            long at = s.expireAt()[k];
            if (at == -1 && k == 1 && s.stateNumber("override") != null) {
                count("check: the state key kept by a runtime limit");
            } else if (at == -1) {
                problems.add("I4: key " + ModelSnapshot.KEY_NAMES.get(k) + " has no TTL");
            } else if (at >= 0 && at < latest) {
                problems.add("I4: key " + ModelSnapshot.KEY_NAMES.get(k) + " expires at +" + (at - s.nowMs())
                        + " ms, before a deadline it holds at +" + (latest - s.nowMs()) + " ms");
            }
        }
        Long seq = s.stateNumber("seq");
        long highest = 0;
        for (String id : s.holders().keySet()) {
            ModelSnapshot.Info info = s.info().get(id);
            highest = Math.max(highest, info == null ? 0 : info.token());
        }
        for (long ticket : s.queue().values()) {
            highest = Math.max(highest, ticket);
        }
        if (highest > 0 && (seq == null || seq < highest)) {
            problems.add("state.seq " + seq + " is below a token or ticket " + highest);
        }
    }

    /** Whose every entry is, the settings it carries, dead parties' deadlines, the limit. */
    private void parties(ModelSnapshot s, List<String> problems) {
        Map<String, Long> entries = new LinkedHashMap<>(s.holders());
        s.queue().keySet().forEach(id -> entries.put(id, s.queueDeadline().get(id)));
        for (Map.Entry<String, Long> e : entries.entrySet()) {
            String id = e.getKey();
            boolean holder = s.holders().containsKey(id);
            ModelSnapshot.Info info = s.info().get(id);
            if (info == null || e.getValue() == null) {
                continue;
            }
            Party p = byInbox.get(info.inbox());
            if (p == null) {
                problems.add("entry " + id + " belongs to no known party: " + s.rawInfo().get(id));
                continue;
            }
            if (info.count() > p.limit || info.lease() != p.leaseMs || info.claim() != p.claimMs) {
                problems.add("entry " + id + " of " + p + " does not carry its settings: " + s.rawInfo().get(id));
            }
            if (!p.dead()) {
                continue;
            }
            count("check: dead party's entry");
            long deadline = e.getValue();
            long bound = holder
                    ? Math.max(p.deathMs + p.deathSlackMs + Math.max(p.leaseMs, p.claimMs),
                            info.token() / 1000 + p.claimMs + PHANTOM_SLACK_MS)
                    : p.deathMs + p.deathSlackMs + p.claimMs;
            if (deadline > bound) {
                problems.add("dead party " + p + " (dead at " + p.deathMs + ") has " + (holder ? "holder " : "waiter ")
                        + id + " with deadline " + deadline + ", after " + bound + " (by "
                        + (deadline - bound) + " ms): " + s.rawInfo().get(id));
            }
        }
        String newest = s.newestHolder();
        if (newest != null) {
            long grantMs = s.info().get(newest).token() / 1000;
            int bound = limitAround(grantMs);
            if (s.heldCount() == bound) {
                count("check: holders at the limit");
            }
            if (s.heldCount() > bound) {
                problems.add("I3: holders hold " + s.heldCount() + " permits, above " + bound
                        + ", the largest limit of a party alive around the newest grant (" + newest + ")");
            }
        }
        Long limit = s.stateNumber("limit");
        if (limit != null && parties.stream().noneMatch(p -> p.limit == limit)) {
            problems.add("state.limit " + limit + " is no party's limit");
        }
    }

    /** FIFO, the idle head, expired entries purged, tokens and tickets only going up. */
    private void progress(ModelSnapshot s, List<String> problems) {
        for (String id : mustBeGone) {
            if (s.holders().containsKey(id) || s.queue().containsKey(id)) {
                problems.add(id + " was given back, but Redis still has it: " + s.rawInfo().get(id));
            }
        }
        mustBeGone.clear();
        fullLease.forEach((id, earliest) -> {
            Long deadline = s.holders().get(id);
            if (deadline == null ? s.nowMs() < earliest - CLOCK_TOLERANCE_MS : deadline < earliest) {
                problems.add("holder " + id + " was extended to a full lease ending no earlier than " + earliest
                        + ", but its deadline is " + deadline + ": " + s.rawInfo().get(id));
            }
        });
        fullLease.clear();
        if (purgedBefore != Long.MIN_VALUE) {
            long cut = purgedBefore;
            purgedBefore = Long.MIN_VALUE;
            count("check: purge by state()");
            s.holders().forEach((id, deadline) -> {
                if (deadline < cut) {
                    problems.add("holder " + id + " whose lease ended " + (cut - deadline)
                            + " ms before a state() call is still there after it: " + s.rawInfo().get(id));
                }
            });
            s.queueDeadline().forEach((id, deadline) -> {
                if (deadline < cut) {
                    problems.add("waiter " + id + " whose heartbeat ended " + (cut - deadline)
                            + " ms before a state() call is still there after it: " + s.rawInfo().get(id));
                }
            });
        }
        String head = s.head();
        if (head != null && s.info().containsKey(head)) {
            ModelSnapshot.Info info = s.info().get(head);
            Long limit = s.stateNumber("override") != null ? s.stateNumber("override") : s.stateNumber("limit");
            Long used = s.stateNumber("used");
            if (limit == null || used == null || info.count() > limit || used + info.count() <= limit) {
                problems.add("I3: the head " + head + " (" + info.count() + " permits) waits although it fits: used "
                        + used + ", limit of the last call " + limit);
            }
        }
        if (previous == null) {
            return;
        }
        for (String b : s.holders().keySet()) {
            Long ticketB = previous.queue().get(b);
            if (ticketB == null) {
                continue;
            }
            count("check: waiter seen granted");
            if (previous.head() != null && !previous.head().equals(b)) {
                count("check: waiter behind the head seen granted");
            }
            ModelSnapshot.Info infoB = previous.info().get(b);
            Party partyB = infoB == null ? null : byInbox.get(infoB.inbox());
            if (partyB != null && !partyB.fair && partyB.life != Life.PHANTOM) {
                // An unfair waiter whose entry vanished may re-join by taking free permits directly.
                continue;
            }
            for (Map.Entry<String, Long> a : previous.queue().entrySet()) {
                if (a.getValue() < ticketB && a.getValue().equals(s.queue().get(a.getKey()))) {
                    problems.add("FIFO: waiter " + b + " (ticket " + ticketB + ", " + partyB
                            + ") was granted while " + a.getKey() + " (ticket " + a.getValue()
                            + ") ahead of it still waits");
                }
            }
        }
        for (String id : s.holders().keySet()) {
            ModelSnapshot.Info info = s.info().get(id);
            ModelSnapshot.Info before = previous.holders().containsKey(id) ? previous.info().get(id) : null;
            if (info != null && (before == null || before.token() != info.token()) && info.token() <= tokenFloor) {
                problems.add("new holder " + id + " has token " + info.token() + ", not above " + tokenFloor
                        + " seen in an earlier snapshot");
            }
        }
        for (Map.Entry<String, Long> e : s.queue().entrySet()) {
            Long before = previous.queue().get(e.getKey());
            if (!e.getValue().equals(before) && e.getValue() <= tokenFloor) {
                problems.add("new waiter " + e.getKey() + " has ticket " + e.getValue() + ", not above " + tokenFloor);
            }
        }
    }

    /**
     * Fair mode, for callers that do not wait: a fair registry's zero-wait acquisition granted in
     * this step while a waiter that was queued before the step still waits with the same ticket
     * jumped the queue.
     */
    private void fairArrivals(ModelSnapshot s, List<String> problems) {
        List<Acq> jumpers = grantedThisStep;
        grantedThisStep = new ArrayList<>();
        if (previous == null) {
            return;
        }
        for (Acq a : jumpers) {
            if (!a.party.fair || a.kind != Kind.NOW) {
                continue;
            }
            count("check: fair zero-wait grant");
            for (Map.Entry<String, Long> w : previous.queue().entrySet()) {
                if (w.getValue().equals(s.queue().get(w.getKey()))) {
                    problems.add("fair " + a + " was granted at once while " + w.getKey() + " (ticket " + w.getValue()
                            + ") waited before and after it");
                }
            }
        }
    }

    /**
     * Q1: a bounded party's caller joins only behind fewer than its bound, and nobody joins ahead
     * of a waiter (re-joins go to the back too), so in every snapshot each waiter of a party with
     * a bound has fewer than that bound ahead of it, in ticket order.
     */
    private void queueBound(ModelSnapshot s, List<String> problems) {
        List<Map.Entry<String, Long>> queue = new ArrayList<>(s.queue().entrySet());
        queue.sort(Map.Entry.comparingByValue());
        for (int ahead = 0; ahead < queue.size(); ahead++) {
            String id = queue.get(ahead).getKey();
            ModelSnapshot.Info info = s.info().get(id);
            Party p = info == null ? null : byInbox.get(info.inbox());
            if (p != null && p.maxWaiters > 0) {
                count("check: queue bound");
                if (ahead >= p.maxWaiters) {
                    problems.add("waiter " + id + " of " + p + " has " + ahead + " waiters ahead of it");
                }
            }
        }
    }

    /** What the callers of live registries believe, against the snapshot. */
    private void clientView(ModelSnapshot s, List<String> problems) {
        int believed = 0;
        List<String> believers = new ArrayList<>();
        for (Held h : believedHeld()) {
            if (!h.permit.isHeld()) {
                continue;
            }
            String id = h.permit.id();
            Long deadline = s.holders().get(id);
            ModelSnapshot.Info info = s.info().get(id);
            if (deadline == null || info == null || info.token() != h.token) {
                problems.add("the caller holds " + h + " (isHeld true after the snapshot), but Redis has "
                        + (deadline == null ? "no such holder" : "holder info " + s.rawInfo().get(id)));
                continue;
            }
            if (deadline < s.nowMs() - CLOCK_TOLERANCE_MS) {
                problems.add("the caller holds " + h + ", but its lease in Redis ended " + (s.nowMs() - deadline)
                        + " ms before the snapshot");
            }
            if (info.count() < h.permit.count()) {
                problems.add("the caller believes " + h + " holds " + h.permit.count() + " permits, but Redis has "
                        + info.count());
            }
            believed += h.permit.count();
            believers.add(h.toString());
            count("check: held permit in Redis");
        }
        String newest = s.newestHolder();
        if (believed > 0 && newest != null) {
            int bound = limitAround(s.info().get(newest).token() / 1000);
            if (believed > bound) {
                problems.add("callers of live registries hold " + believed + " permits, above the limit " + bound
                        + ": " + believers);
            }
        }
        for (Held h : justReleased) {
            if (h.releaseEffective && !outageSince(h.releaseNanos)
                    && (s.holders().containsKey(h.permit.id()) || s.queue().containsKey(h.permit.id()))) {
                problems.add("released " + h + " is still in Redis");
            }
        }
        justReleased.clear();
        Set<String> seen = new HashSet<>();
        for (Map.Entry<String, Long> e : s.holders().entrySet()) {
            ModelSnapshot.Info info = s.info().get(e.getKey());
            Party p = info == null ? null : byInbox.get(info.inbox());
            if (p == null || !p.alive() || permitsById.containsKey(e.getKey())) {
                continue;
            }
            String key = e.getKey() + "/" + info.token();
            seen.add(key);
            long since = unknownHolderSince.computeIfAbsent(key, k -> s.nowMs());
            if (s.nowMs() - since > ORPHAN_MS && e.getValue() > s.nowMs()) {
                problems.add("holder " + e.getKey() + " of live " + p + " was handed to no caller for "
                        + (s.nowMs() - since) + " ms (a leaked permit): " + s.rawInfo().get(e.getKey()));
            }
        }
        unknownHolderSince.keySet().retainAll(seen);
    }

    private void hangs() {
        long now = System.nanoTime();
        for (Acq a : open) {
            if (!a.party.alive() || a.future.isDone()) {
                continue;
            }
            check(now - a.startNanos < a.maxWait.toNanos() + HANG_SLACK_NANOS,
                    () -> a + " is still unanswered " + (now - a.startNanos) / 1_000_000 + " ms after it started");
            check(!a.interrupted || now - a.interruptNanos < HANG_SLACK_NANOS,
                    () -> a + " is still blocked " + (now - a.interruptNanos) / 1_000_000 + " ms after its interrupt");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Helpers

    /** @return permits of live registries the walk has not released, and that must be in Redis while isHeld */
    private List<Held> believedHeld() {
        return permits.stream().filter(h -> h.party().alive() && !h.released && !h.lateClaim
                && h.token > dataLossEndUs).toList();
    }

    /** @return permits released while Redis was up, with no outage since: gone from Redis for good */
    private List<Held> releasedForGood() {
        return releasedPermits.stream().filter(h -> h.releaseEffective && !outageSince(h.releaseNanos)).toList();
    }

    /** @return ids of waiters of live registries in the latest snapshot */
    private List<String> liveWaiters() {
        if (current == null) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        for (String id : current.queue().keySet()) {
            ModelSnapshot.Info info = current.info().get(id);
            Party p = info == null ? null : byInbox.get(info.inbox());
            if (p != null && p.alive()) {
                ids.add(id);
            }
        }
        return ids;
    }

    /** @return holders and waiters of live registries whose deadline has not passed */
    private List<String> liveEntries(ModelSnapshot s) {
        List<String> found = new ArrayList<>();
        for (Party p : parties) {
            if (p.alive()) {
                found.addAll(entriesOf(s, p));
            }
        }
        return found;
    }

    private static List<String> entriesOf(ModelSnapshot s, Party p) {
        List<String> found = new ArrayList<>();
        s.holders().forEach((id, deadline) -> {
            ModelSnapshot.Info info = s.info().get(id);
            if (info != null && info.inbox().equals(p.inbox) && deadline > s.nowMs()) {
                found.add("holder " + id + " " + s.rawInfo().get(id) + " for " + (deadline - s.nowMs()) + " ms");
            }
        });
        s.queueDeadline().forEach((id, deadline) -> {
            ModelSnapshot.Info info = s.info().get(id);
            if (info != null && info.inbox().equals(p.inbox) && deadline > s.nowMs()) {
                found.add("waiter " + id + " " + s.rawInfo().get(id) + " for " + (deadline - s.nowMs()) + " ms");
            }
        });
        return found;
    }

    private long openWaits() {
        return open.stream().filter(a -> a.kind != Kind.NOW && a.party.alive() && !a.future.isDone()).count();
    }

    /** @return how long a caller keeps its permit: often briefly, often past its lease (renewal, expiry) */
    private static long holdFor(Random r) {
        int roll = r.nextInt(10);
        return roll < 5 ? 0 : roll < 9 ? 100 + r.nextInt(1100) : 1500 + r.nextInt(4500);
    }

    private static int permitsToAsk(Random r, int limit) {
        int roll = r.nextInt(20);
        int extra = r.nextInt(limit);
        if (roll < 12) {
            return 1;
        }
        return roll < 17 ? Math.min(2, limit) : 1 + extra;
    }

    private static int weighted(Random r, int[] weights) {
        int total = 0;
        for (int w : weights) {
            total += w;
        }
        int roll = r.nextInt(total);
        for (int i = 0; i < weights.length; i++) {
            roll -= weights[i];
            if (roll < 0) {
                return i;
            }
        }
        throw new IllegalStateException();
    }

    /** A script call made by the walk itself: it must work while Redis is up. */
    private <T> T rawCall(Supplier<T> call) {
        long start = System.nanoTime();
        try {
            return call.get();
        } catch (SemaphoreUnavailableException e) {
            check(outageOverlaps(start, System.nanoTime()),
                    () -> "a script call failed while Redis was up: " + trace(e));
            return null;
        }
    }

    private ModelSnapshot snapshot() {
        try {
            return ModelSnapshot.read(observer, keys.all());
        } catch (RuntimeException first) {
            // once more, in case the observer was reconnecting after a restart
            return soon().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> ModelSnapshot.read(observer, keys.all()), snapshot -> snapshot != null);
        }
    }

    /** Awaitility polling at once and then every 20 ms unless told otherwise. */
    private static org.awaitility.core.ConditionFactory soon() {
        return await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20));
    }

    private long serverUs() {
        List<String> time = soon().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                .until(() -> observer.time(), t -> t != null && t.size() == 2);
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }

    /** @return the server time (ms) at which a script ran, from its reply */
    private static long atMs(Usage usage) {
        return usage.serverMicros() / 1000;
    }

    private long serverMs() {
        return serverUs() / 1000;
    }

    private boolean outageOverlaps(long fromNanos, long toNanos) {
        for (long[] outage : outages) {
            if (outage[0] <= toNanos && outage[1] + OUTAGE_GRACE_NANOS >= fromNanos) {
                return true;
            }
        }
        return !redisUp;
    }

    private boolean outageSince(long nanos) {
        return outageOverlaps(nanos, System.nanoTime());
    }

    private void count(String what) {
        stats.merge(what, 1, Integer::sum);
    }

    private void remember(String what) {
        history.addLast(what);
        while (history.size() > 40) {
            history.removeFirst();
        }
    }

    private void check(boolean condition, Supplier<String> message) {
        if (!condition) {
            fail(message.get());
        }
    }

    private void fail(String message) {
        StringBuilder text = new StringBuilder();
        text.append("ModelBasedTest seed=").append(seed).append(" steps=").append(steps).append(": at step ")
                .append(step).append(" (").append(operation).append("): ").append(message).append('\n');
        text.append("replay: -Dmodel.seed=").append(seed).append(" -Dmodel.steps=").append(steps).append('\n');
        text.append("parties:\n");
        parties.stream().filter(p -> p.life != Life.PHANTOM || p.deathMs > serverMsQuietly() - 20_000)
                .forEach(p -> text.append("  ").append(p).append('\n'));
        text.append("last operations:\n");
        history.forEach(line -> text.append("  ").append(line).append('\n'));
        throw new AssertionError(text.toString());
    }

    private long serverMsQuietly() {
        try {
            return current == null ? 0 : current.nowMs();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static boolean interruptedCall(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof io.lettuce.core.RedisCommandInterruptedException
                    || String.valueOf(cause.getMessage()).contains("interrupted")) {
                return true;
            }
        }
        return false;
    }

    private static String trace(Throwable error) {
        StringWriter text = new StringWriter();
        error.printStackTrace(new PrintWriter(text));
        String all = text.toString();
        return all.length() > 2000 ? all.substring(0, 2000) + "..." : all;
    }
}
