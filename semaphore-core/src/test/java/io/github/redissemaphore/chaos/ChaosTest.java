package io.github.redissemaphore.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.ScriptSnapshot;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.TcpProxy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Chaos: several real JVMs ({@link ChaosWorker} child processes) share one semaphore while faults hit
 * them and its Redis, and an independent witness (a second Redis, never faulted) counts who is inside.
 * Two shapes, the same run and checks: {@link #chaos one semaphore}, and {@link
 * #aCappedFleetNeverExceedsEitherLevel a capped one} whose keys ({@code chaos:k0}, {@code chaos:k1},
 * ...) each hold at most their permits and all together at most total-permits; its callers pick a
 * key at random for each call, and the witness counts inside per key and in all, so "permits"
 * below means both limits.
 *
 * <p>Faults, drawn from a printed seed, one at a time (each of the five at least once): SIGKILL of
 * a worker JVM (holders and waiters at once, at a random moment; a replacement starts), a restart
 * of the semaphore's Redis without its data, {@code CLIENT PAUSE} of 1-1.5 s, killing every pub/sub
 * connection, a partition of worker 0 (it reaches Redis through a {@link TcpProxy} that stops
 * forwarding) for 1-3 s.
 *
 * <p>What is checked, and how:
 * <ol>
 * <li><b>Never more inside than permits</b> (witness): a caller enters after tryAcquire returned a
 *     permit and leaves before release, or as soon as its lease is lost ({@code onLost}, or
 *     {@code isHeld()} false, polled every 5 ms while holding). Witness rule for a killed JVM: the
 *     parent {@link Witness#bury buries} it right after the SIGKILL (process reaped): its count is
 *     removed and anything it sent later is ignored. Its permits stay taken in Redis until their
 *     lease ends, so during that time the witness undercounts (the check is weaker, never wrong).
 *     An enter above the permits fails the run unless it falls in a data-loss window.</li>
 * <li><b>After a data loss, only the documented window, and every holder told</b>: a restart at S
 *     (stop begins) opens the window [S, S + lease + 1 s]; every permit granted before S and not
 *     released by S + lease + 1 s must have had its {@code onLost} by then (docs/guarantees.md: "at
 *     its next renewal, or at the latest when its lease runs out while it cannot renew").</li>
 * <li><b>A dead party's permits come back within their (claim) lease</b>: a monitor snapshots the
 *     semaphore's keys every 150 ms; for each killed JVM (owner host/pid/thread in the info records)
 *     the latest deadline any of its entries (holder, claim, waiter) ever shows must be at most
 *     kill + max(lease, 2 x waiter heartbeat) + 500 ms: a lease renewed just before the kill lasts
 *     one lease; a dead waiter stays queued up to one heartbeat, and one granted just before that
 *     holds a claim of one more heartbeat, counted from the grant.</li>
 * <li><b>No caller blocked past max(wait, command timeout) + command timeout + 200 ms (the longest docs/guarantees.md allows)</b>: every tryAcquire is timed.</li>
 * <li><b>The data model</b>: every snapshot satisfies I1, I2, I4 and used &lt;= permits
 *     ({@code ScriptSnapshot#violations}); capped, also K1..K4 of the two levels and each key's used
 *     &lt;= its permits; fencing tokens are never handed out twice.</li>
 * <li><b>The end</b>: live workers stop calling and keep what they hold; after lease + 1 s no
 *     entry of a dead JVM is left, there is no waiter, the holders are exactly the permits the
 *     live workers say they hold and {@code used} is the sum of their counts (capped: each key's
 *     too); after they release and exit, nothing is held and the witness counts nobody inside
 *     (capped: no key's field is left in the state, heads and ready are empty).</li>
 * </ol>
 *
 * <p>Short runs (in {@code ./mvnw -B verify}): 35 s each, 3 worker JVMs of 4 threads, 2 s lease;
 * 3 permits, or capped 4 keys of 2 permits with a total of 5. A long run, and a replay (of one
 * test: add {@code #chaos} or {@code #aCappedFleetNeverExceedsEitherLevel} to the class):
 * {@code ./mvnw -B -pl semaphore-core test -Dtest=ChaosTest -Dchaos.seconds=600 -Dchaos.seed=42
 * -Dsurefire.failIfNoSpecifiedTests=false}; other knobs: chaos.workers, chaos.threads,
 * chaos.permits, chaos.leaseMs, chaos.longHoldPercent; of the capped shape chaos.capped.keys,
 * chaos.capped.permits (each key's), chaos.capped.totalPermits.
 */
@Tag("slow")
@RedisTest
class ChaosTest {

    private static final long SECONDS = Long.getLong("chaos.seconds", 35);
    private static final int WORKERS = Integer.getInteger("chaos.workers", 3);
    private static final int THREADS = Integer.getInteger("chaos.threads", 4);
    private static final int PERMITS = Integer.getInteger("chaos.permits", 3);
    private static final long LEASE_MS = Long.getLong("chaos.leaseMs", 2000);
    private static final int LONG_HOLD_PERCENT = Integer.getInteger("chaos.longHoldPercent", 8);
    private static final long HEARTBEAT_MS = 2000;
    private static final long COMMAND_TIMEOUT_MS = 1000;
    private static final long OVERRUN_ALLOWED_MS = 200;
    private static final long RETURN_SLACK_MS = 500;
    private static final long TOLD_SLACK_MS = 1000;
    private static final String NAME = "chaos";
    private static final Shape ONE = new Shape(PERMITS, 0, 0);
    private static final Shape CAPPED = new Shape(Integer.getInteger("chaos.capped.permits", 2),
            Integer.getInteger("chaos.capped.totalPermits", 5), Integer.getInteger("chaos.capped.keys", 4));

    /**
     * What the fleet shares: one semaphore of {@code permits}, or a capped one of {@code keys} keys
     * ({@code k0}, {@code k1}, ...) of {@code permits} each and {@code totalPermits} in all.
     */
    private record Shape(int permits, int totalPermits, int keys) {

        boolean capped() {
            return totalPermits > 0;
        }

        /** @return the permits all callers together may hold */
        int total() {
            return capped() ? totalPermits : permits;
        }

        SemaphoreKeys redisKeys() {
            return capped() ? SemaphoreKeys.capped("semaphore", NAME, null, totalPermits)
                    : SemaphoreKeys.of("semaphore", NAME);
        }

        SemaphoreSettings settings() {
            return SemaphoreSettings.DEFAULTS.withPermits(permits).withLeaseTime(Duration.ofMillis(LEASE_MS))
                    .withTotalPermits(totalPermits);
        }

        List<String> violations(ScriptSnapshot snapshot) {
            return snapshot.violations(total(), permits);
        }

        @Override
        public String toString() {
            return capped() ? keys + " keys of " + permits + " permits, total-permits " + totalPermits
                    : permits + " permits";
        }
    }

    private final Map<Integer, Worker> live = new ConcurrentHashMap<>();
    private final List<Worker> dead = new CopyOnWriteArrayList<>();
    private final List<long[]> restarts = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> faults = new LinkedHashMap<>();
    private final List<String> snapshotProblems = new CopyOnWriteArrayList<>();
    private final AtomicLong snapshots = new AtomicLong();
    private final AtomicLong maxUsed = new AtomicLong();
    private final AtomicLong maxKeyUsed = new AtomicLong();

    private Shape shape;
    private Path dir;
    private RedisServer semaphoreServer;
    private Witness witness;
    private TcpProxy proxy;
    private int generation;

    /** A worker JVM: its slot (0 is behind the proxy), id, process, and, once dead, when it was killed. */
    private static final class Worker {
        final int slot;
        final String wid;
        final Process process;
        volatile long killedMs;
        /** Latest deadline (server ms) of any of its entries seen in Redis after it was killed. */
        final AtomicLong latestDeadlineAfterKill = new AtomicLong();

        Worker(int slot, String wid, Process process) {
            this.slot = slot;
            this.wid = wid;
            this.process = process;
        }
    }

    @Test
    @Timeout(value = 900 + 2 * 3600, unit = TimeUnit.SECONDS)
    void chaos(@Dedicated RedisServer server, @Dedicated RedisServer witnessServer) throws Exception {
        run(ONE, server, witnessServer);
    }

    /** The issue's fleet: never more than permits in one key, nor total-permits in all, under kills and restarts. */
    @Test
    @Timeout(value = 900 + 2 * 3600, unit = TimeUnit.SECONDS)
    void aCappedFleetNeverExceedsEitherLevel(@Dedicated RedisServer server, @Dedicated RedisServer witnessServer)
            throws Exception {
        run(CAPPED, server, witnessServer);
    }

    private void run(Shape shape, RedisServer server, RedisServer witnessServer) throws Exception {
        this.shape = shape;
        long seed = Long.getLong("chaos.seed", System.nanoTime());
        System.out.printf("ChaosTest seed=%d seconds=%d workers=%d threads=%d %s lease=%d ms "
                + "(replay: -Dchaos.seed=%d)%n", seed, SECONDS, WORKERS, THREADS,
                shape.capped() ? shape : "permits=" + PERMITS, LEASE_MS, seed);
        Random random = new Random(seed);
        semaphoreServer = server;
        witnessPortValue = witnessServer.port();
        dir = Files.createTempDirectory("chaos-");
        witness = new Witness(new StringRedisTemplate(witnessServer.connectionFactory()), shape.total(),
                shape.permits());
        LettuceConnectionFactory direct = server.connectionFactory(Duration.ofSeconds(5));
        SemaphoreKeys keys = shape.redisKeys();
        proxy = TcpProxy.to(server);
        AtomicBoolean monitoring = new AtomicBoolean(true);
        Thread monitor = new Thread(() -> monitor(direct, keys, monitoring), "chaos-monitor");
        try {
            for (int slot = 0; slot < WORKERS; slot++) {
                start(slot, random.nextLong());
            }
            monitor.setDaemon(true);
            monitor.start();
            runFaults(random, seed);
            monitoring.set(false);
            monitor.join(10_000);
            endOfRun(direct, keys);
        } finally {
            monitoring.set(false);
            live.values().forEach(worker -> worker.process.destroyForcibly());
            proxy.close();
        }
        analyse();
    }

    // ---------------------------------------------------------------------------------------------
    // Workers and faults

    private void start(int slot, long seed) throws IOException {
        String wid = "w" + slot + "g" + (generation++);
        int port = slot == 0 ? proxy.port() : semaphoreServer.port();
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
                "-cp", System.getProperty("java.class.path"), ChaosWorker.class.getName(),
                dir.toString(), wid, "127.0.0.1", String.valueOf(port), String.valueOf(witnessPort()),
                String.valueOf(shape.permits()), String.valueOf(LEASE_MS), String.valueOf(THREADS),
                String.valueOf(seed), String.valueOf(COMMAND_TIMEOUT_MS), NAME, String.valueOf(LONG_HOLD_PERCENT),
                String.valueOf(shape.totalPermits()), String.valueOf(shape.keys()))
                .redirectErrorStream(true).redirectOutput(dir.resolve("out-" + wid + ".log").toFile()).start();
        live.put(slot, new Worker(slot, wid, process));
    }

    private int witnessPortValue;

    private int witnessPort() {
        return witnessPortValue;
    }

    private void runFaults(Random random, long seed) throws Exception {
        List<String> kinds = List.of("kill", "restart", "pause", "pubsub", "partition");
        List<String> plan = new ArrayList<>(kinds);
        Collections.shuffle(plan, random);
        long startNanos = System.nanoTime();
        long endNanos = startNanos + TimeUnit.SECONDS.toNanos(SECONDS);
        // Let the workers warm up (JVM start, first grants) before the first fault.
        long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (witness.enters() < 10L * WORKERS && System.nanoTime() - warm < 0) {
            Thread.sleep(100);
        }
        Thread.sleep(1000);
        int step = 0;
        while (System.nanoTime() - endNanos < 0) {
            String kind = step < plan.size() ? plan.get(step) : kinds.get(random.nextInt(kinds.size()));
            step++;
            inject(kind, random);
            faults.merge(kind, 1, Integer::sum);
            long gap = 1500 + random.nextInt(2500);
            Thread.sleep(Math.max(0, Math.min(gap, (endNanos - System.nanoTime()) / 1_000_000)));
        }
        System.out.printf("faults injected (seed %d): %s%n", seed, faults);
    }

    private void inject(String kind, Random random) throws Exception {
        long now = System.currentTimeMillis();
        switch (kind) {
            case "kill" -> {
                int slot = random.nextInt(WORKERS);
                Worker victim = live.remove(slot);
                victim.process.destroyForcibly();
                victim.process.waitFor(10, TimeUnit.SECONDS);
                victim.killedMs = System.currentTimeMillis();
                dead.add(victim);
                long inside = witness.bury(victim.wid);
                System.out.printf("%d fault: SIGKILL %s (pid %d), %d permits inside%n", now, victim.wid,
                        victim.process.pid(), inside);
                start(slot, random.nextLong());
            }
            case "restart" -> {
                long stopAt = System.currentTimeMillis();
                semaphoreServer.stop();
                Thread.sleep(200 + random.nextInt(800));
                semaphoreServer.start();
                long upAt = System.currentTimeMillis();
                restarts.add(new long[] {stopAt, upAt});
                System.out.printf("%d fault: Redis restarted without data, down %d ms%n", now, upAt - stopAt);
            }
            case "pause" -> {
                long ms = 1000 + random.nextInt(500);
                semaphoreServer.pause(Duration.ofMillis(ms));
                System.out.printf("%d fault: CLIENT PAUSE %d ms%n", now, ms);
                Thread.sleep(ms);
            }
            case "pubsub" -> {
                long killed = semaphoreServer.killPubSubClients();
                System.out.printf("%d fault: killed %d pub/sub connections%n", now, killed);
            }
            case "partition" -> {
                long ms = 1000 + random.nextInt(2000);
                proxy.partition();
                System.out.printf("%d fault: partition of worker 0 for %d ms%n", now, ms);
                Thread.sleep(ms);
                proxy.heal();
            }
            default -> throw new IllegalArgumentException(kind);
        }
    }

    /** Snapshots the keys every 150 ms: invariants, and the deadlines of the entries of killed JVMs. */
    private void monitor(LettuceConnectionFactory direct, SemaphoreKeys keys, AtomicBoolean monitoring) {
        while (monitoring.get()) {
            try {
                Thread.sleep(150);
                ScriptSnapshot snapshot = ScriptSnapshot.take(direct, keys);
                snapshots.incrementAndGet();
                maxUsed.accumulateAndGet(snapshot.used(), Math::max);
                snapshot.keyCounters().values()
                        .forEach(key -> maxKeyUsed.accumulateAndGet(key.used(), Math::max));
                List<String> violations = shape.violations(snapshot);
                if (!violations.isEmpty() && snapshotProblems.size() < 20) {
                    snapshotProblems.add(violations + " in " + snapshot);
                }
                for (Worker worker : dead) {
                    long pid = worker.process.pid();
                    Map<String, Long> deadlines = new HashMap<>(snapshot.holders());
                    deadlines.putAll(snapshot.queueDeadline());
                    deadlines.forEach((id, deadline) -> {
                        if (snapshot.ownedBy(id, pid)) {
                            worker.latestDeadlineAfterKill.accumulateAndGet(deadline, Math::max);
                        }
                    });
                }
            } catch (InterruptedException e) {
                return;
            } catch (DataAccessException e) {
                // Redis stopped, paused or partitioned away: no picture this time. Anything else
                // (a snapshot that cannot be read, a bug of the checks) is a problem of the run.
            } catch (RuntimeException e) {
                if (snapshotProblems.size() < 20) {
                    snapshotProblems.add("a snapshot failed: " + e);
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // End of the run

    private Map<String, Integer> heldAtEnd = new HashMap<>();
    private ScriptSnapshot quiesced;
    private ScriptSnapshot emptied;
    private long witnessInsideAtEnd;

    private void endOfRun(LettuceConnectionFactory direct, SemaphoreKeys keys) throws Exception {
        Files.createFile(dir.resolve("quiesce"));
        for (Worker worker : live.values()) {
            Path file = dir.resolve("quiesced-" + worker.wid);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(file)) {
                assertThat(System.nanoTime() - deadline).as("%s quiesces within 30 s", worker.wid).isNegative();
                assertThat(worker.process.isAlive()).as("%s is alive; see %s", worker.wid,
                        dir.resolve("out-" + worker.wid + ".log")).isTrue();
                Thread.sleep(50);
            }
            for (String line : Files.readAllLines(file)) {
                if (!line.isBlank()) {
                    // "id count", or capped "id count key": the member in Redis is then "key id".
                    String[] parts = line.split(" ");
                    heldAtEnd.put(parts.length > 2 ? parts[2] + " " + parts[0] : parts[0], Integer.parseInt(parts[1]));
                }
            }
        }
        // Every entry of a dead JVM has reached its deadline (by the bound check 3 holds it to, from
        // the last kill, which may have come just before the end), and so has everything the live
        // workers left running at the quiesce; the live holders renew theirs.
        long lastKillMs = dead.stream().mapToLong(w -> w.killedMs).max().orElse(0);
        long settledMs = Math.max(System.currentTimeMillis() + Math.max(LEASE_MS, HEARTBEAT_MS) + 1000,
                lastKillMs + deadPartyBoundMs());
        Thread.sleep(Math.max(0, settledMs - System.currentTimeMillis()));
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(direct)
                .configure(NAME, shape.settings()).build()) {
            // A script call that purges what expired: of a capped semaphore, about all its keys.
            Runnable purge = shape.capped() ? () -> registry.cap(NAME).state()
                    : registry.semaphore(NAME, shape.settings())::state;
            purge.run();
            quiesced = ScriptSnapshot.take(direct, keys);
            Files.createFile(dir.resolve("stop"));
            for (Worker worker : live.values()) {
                if (!worker.process.waitFor(20, TimeUnit.SECONDS)) {
                    worker.process.destroyForcibly();
                }
            }
            purge.run();
            emptied = ScriptSnapshot.take(direct, keys);
        }
        witnessInsideAtEnd = witness.inside();
        for (int k = 0; k < shape.keys(); k++) {
            witnessInsideAtEnd += Math.abs(witness.inside("k" + k));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Analysis of the events every worker wrote

    /** One permit as its worker saw it. */
    private static final class Grant {
        String wid;
        long grantMs;
        long token;
        long releaseMs = -1;
        long lostMs = -1;
        long notHeldMs = -1;
    }

    private void analyse() throws IOException {
        List<String> failures = new ArrayList<>();
        Map<String, Grant> grants = new HashMap<>();
        long calls = 0;
        long rejected = 0;
        long unavailable = 0;
        long errors = 0;
        long worstOverrunMs = Long.MIN_VALUE / 2;
        long worstOverrunLateMs = 0;
        String worstOverrunCall = "";
        List<String> errorCalls = new ArrayList<>();
        List<String> overruns = new ArrayList<>();
        Set<Long> tokens = new HashSet<>();
        long duplicateTokens = 0;
        Map<String, Integer> grantsPerKey = new TreeMap<>();
        try (var files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith("events-")).toList()) {
                String wid = file.getFileName().toString().substring("events-".length()).replace(".log", "");
                List<String> lines = Files.readAllLines(file);
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i);
                    // Only a SIGKILL cuts a line, and only the last one a killed worker wrote.
                    boolean mayBeCut = i == lines.size() - 1 && dead.stream().anyMatch(w -> w.wid.equals(wid));
                    String[] p = line.split(" ");
                    if (p.length < 2) {
                        if (!mayBeCut) {
                            failures.add("unreadable line " + (i + 1) + " of " + file + ": '" + line + "'");
                        }
                        continue;
                    }
                    try {
                        switch (p[0]) {
                            case "C" -> {
                                calls++;
                                long tookMs = Long.parseLong(p[2]) / 1_000_000;
                                long waitMs = Long.parseLong(p[3]);
                                // how late the worker's own 10 ms timer ran meanwhile (measured for an overrun only)
                                long lateMs = Long.parseLong(p[4]);
                                // The longest a call may take (docs/guarantees.md): max(wait, timeout) for
                                // the calls of its wait, then its deadline's cancel its own full timeout.
                                long overrun = tookMs - Math.max(waitMs, COMMAND_TIMEOUT_MS) - COMMAND_TIMEOUT_MS;
                                if (overrun - lateMs > worstOverrunMs - worstOverrunLateMs) {
                                    worstOverrunMs = overrun;
                                    worstOverrunLateMs = lateMs;
                                    worstOverrunCall = wid + " " + line;
                                }
                                if (overrun > OVERRUN_ALLOWED_MS + lateMs && overruns.size() < 10) {
                                    overruns.add(wid + ": " + line);
                                }
                                switch (p[5]) {
                                    case "G" -> {
                                        Grant grant = grants.computeIfAbsent(p[7], id -> new Grant());
                                        grant.wid = wid;
                                        grant.grantMs = Long.parseLong(p[8]);
                                        grant.token = Long.parseLong(p[9]);
                                        if (!tokens.add(grant.token)) {
                                            duplicateTokens++;
                                        }
                                        if (p.length > 10) {
                                            grantsPerKey.merge(p[10], 1, Integer::sum);
                                        }
                                    }
                                    case "R" -> rejected++;
                                    case "U" -> unavailable++;
                                    default -> {
                                        errors++;
                                        if (errorCalls.size() < 10) {
                                            errorCalls.add(wid + ": " + line);
                                        }
                                    }
                                }
                            }
                            case "X" -> grants.computeIfAbsent(p[1], id -> new Grant()).releaseMs = Long.parseLong(p[2]);
                            case "L" -> grants.computeIfAbsent(p[1], id -> new Grant()).lostMs = Long.parseLong(p[2]);
                            case "N" -> grants.computeIfAbsent(p[1], id -> new Grant()).notHeldMs = Long.parseLong(p[2]);
                            default -> {
                            }
                        }
                    } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
                        if (!mayBeCut) {
                            failures.add("unreadable line " + (i + 1) + " of " + file + ": '" + line + "' (" + e + ")");
                        }
                    }
                }
            }
        }
        long granted = grants.values().stream().filter(g -> g.wid != null).count();
        long lost = grants.values().stream().filter(g -> g.lostMs >= 0).count();

        // 1. The witness: never more inside than permits (capped: in a key, or in all), outside the data-loss windows.
        long overInWindows = 0;
        for (Witness.Over over : witness.over()) {
            long at = over.atMs();
            boolean excused = restarts.stream().anyMatch(r -> at >= r[0] && at <= r[0] + LEASE_MS + TOLD_SLACK_MS);
            if (excused) {
                overInWindows++;
            } else if (over.key() == null) {
                failures.add("the witness saw " + over.inside() + " inside (permits " + shape.permits() + ") at " + at
                        + " (" + over.wid() + ") outside any data-loss window " + windows());
            } else {
                failures.add("the witness saw " + over.keyInside() + " inside key " + over.key() + " (permits "
                        + shape.permits() + ") and " + over.inside() + " in all (total " + shape.total() + ") at "
                        + at + " (" + over.wid() + ") outside any data-loss window " + windows());
            }
        }

        // 2. Data loss: every permit held across a restart is reported lost by S + lease + slack.
        long worstTellMs = -1;
        long heldAcrossRestarts = 0;
        for (long[] restart : restarts) {
            long told = restart[0] + LEASE_MS + TOLD_SLACK_MS;
            for (Map.Entry<String, Grant> entry : grants.entrySet()) {
                Grant g = entry.getValue();
                long toldAt = g.lostMs < 0 ? g.notHeldMs : g.notHeldMs < 0 ? g.lostMs : Math.min(g.lostMs, g.notHeldMs);
                // Released before its lease could run out: it may never learn, and need not.
                if (g.wid == null || g.grantMs >= restart[0] || (toldAt >= 0 && toldAt < restart[0])
                        || (toldAt < 0 && g.releaseMs >= 0 && g.releaseMs <= restart[0] + LEASE_MS + 100)
                        || diedBefore(g.wid, told)) {
                    continue;
                }
                heldAcrossRestarts++;
                if (toldAt < 0) {
                    failures.add("permit " + entry.getKey() + " of " + g.wid + " (granted " + g.grantMs
                            + ", released " + g.releaseMs + ") was held across the restart at " + restart[0]
                            + " and its holder was never told (no onLost, isHeld() never false)");
                } else {
                    worstTellMs = Math.max(worstTellMs, toldAt - restart[0]);
                    if (toldAt > told) {
                        failures.add("permit " + entry.getKey() + " of " + g.wid + " held across the restart at "
                                + restart[0] + " was reported lost only " + (toldAt - restart[0]) + " ms later");
                    }
                }
            }
        }

        // 3. The permits of a dead JVM come back within max(lease, heartbeat) + slack.
        long worstReturnMs = Long.MIN_VALUE;
        for (Worker worker : dead) {
            long latest = worker.latestDeadlineAfterKill.get();
            long back = latest == 0 ? 0 : Math.max(0, latest - worker.killedMs);
            worstReturnMs = Math.max(worstReturnMs, back);
            if (back > deadPartyBoundMs()) {
                failures.add("an entry of " + worker.wid + " (killed at " + worker.killedMs + ") lasted until "
                        + latest + ": " + back + " ms after its death");
            }
            for (ScriptSnapshot end : new ScriptSnapshot[] {quiesced, emptied}) {
                for (String id : end.info().keySet()) {
                    if (end.ownedBy(id, worker.process.pid())) {
                        failures.add("entry " + id + " of the dead " + worker.wid + " still in Redis at the end: "
                                + end);
                    }
                }
            }
        }

        // 4. No caller blocked past max(wait, command timeout) + command timeout + 200 ms (plus however late the worker's
        // JVM let a timer run meanwhile), and every call ended granted, rejected or unavailable.
        if (!overruns.isEmpty()) {
            failures.add("calls blocked past max(wait, command timeout) + command timeout + " + OVERRUN_ALLOWED_MS + " ms + the lateness of"
                    + " their JVM's timer (the field after the wait): " + overruns);
        }
        if (!errorCalls.isEmpty()) {
            failures.add(errors + " calls failed with neither a rejection nor SemaphoreUnavailableException (the"
                    + " worker's out-<wid>.log in the run directory has each exception): " + errorCalls);
        }

        // 5. The data model.
        if (!snapshotProblems.isEmpty()) {
            failures.add("invariants broken in snapshots: " + snapshotProblems);
        }
        if (duplicateTokens > 0) {
            failures.add(duplicateTokens + " fencing tokens were handed out twice");
        }

        // 6. The end (capped: each key's used is the sum of its holders', K1, and an idle key leaves nothing).
        // A permit a worker held at the quiesce and was then told it lost (its renewal late on a
        // loaded machine: onLost, logged "L") is gone from Redis, as it must be; every other is held.
        Map<String, Integer> stillHeld = new HashMap<>(heldAtEnd);
        stillHeld.keySet().removeIf(member -> {
            Grant grant = grants.get(member.substring(member.indexOf(' ') + 1));
            return grant != null && grant.lostMs >= 0 && !quiesced.holders().containsKey(member);
        });
        if (stillHeld.size() < heldAtEnd.size()) {
            System.out.printf("ChaosTest: %d permit(s) held at the quiesce were lost after it, each heard by its holder%n",
                    heldAtEnd.size() - stillHeld.size());
        }
        int heldSum = stillHeld.values().stream().mapToInt(Integer::intValue).sum();
        if (!quiesced.holders().keySet().equals(stillHeld.keySet()) || quiesced.used() != heldSum
                || quiesced.heldCount() != heldSum || !quiesced.queueDeadline().isEmpty()
                || !shape.violations(quiesced).isEmpty()) {
            failures.add("at the end, the live workers hold " + heldAtEnd + " (sum " + heldSum + ") but Redis has "
                    + quiesced + " " + shape.violations(quiesced));
        }
        if (!emptied.holders().isEmpty() || emptied.used() != 0 || !emptied.queueDeadline().isEmpty()
                || !emptied.info().isEmpty() || !shape.violations(emptied).isEmpty()
                || !emptied.keyCounters().isEmpty() || !emptied.heads().isEmpty() || !emptied.ready().isEmpty()) {
            failures.add("after every worker released and exited, Redis still has " + emptied);
        }
        if (witnessInsideAtEnd != 0) {
            failures.add("after every worker left, the witness counts " + witnessInsideAtEnd + " inside");
        }

        System.out.printf("""
                ChaosTest figures: %d s, %d worker JVMs (%d started, %d killed), %d threads each, %s, lease %d ms
                  calls %d: granted %d (witness enters %d, refused as too late %d), rejected %d, unavailable %d, \
                other errors %d; \
                lost notices %d
                  faults %s; restarts %s
                  max inside (witness) %d vs %d permits%s; enters above the permits in data-loss windows %d
                  max used seen in %d snapshots: %d%s
                  worst call overrun past max(wait, command timeout) + command timeout: %d ms, its JVM's timer %d ms late (%s)
                  worst dead-permit return after SIGKILL: %d ms (bound %d ms)
                  permits held across a restart %d; worst onLost after a data loss: %d ms after the stop (bound %d ms)
                  held at the end: %d permits, used %d
                """, SECONDS, WORKERS, generation, dead.size(), THREADS, shape, LEASE_MS, calls, granted,
                witness.enters(), witness.late(), rejected, unavailable, errors, lost, faults, windows(), witness.max(),
                shape.total(), shape.capped() ? " in all; in one key " + witness.maxKey() + " vs " + shape.permits()
                        + " (grants per key " + grantsPerKey + ")" : "",
                overInWindows, snapshots.get(), maxUsed.get(),
                shape.capped() ? " in all, " + maxKeyUsed.get() + " in one key" : "", worstOverrunMs, worstOverrunLateMs,
                worstOverrunCall, worstReturnMs,
                deadPartyBoundMs(), heldAcrossRestarts, worstTellMs, LEASE_MS + TOLD_SLACK_MS, heldSum,
                quiesced.used());
        assertThat(granted).as("grants").isPositive();
        assertThat(failures).as("chaos failures (seed printed above; run directory %s)", dir).isEmpty();
    }

    /**
     * How long after its death an entry of a dead JVM may last: a lease renewed just before the
     * SIGKILL lasts the lease; a waiter stays queued up to the heartbeat, and if it reaches the head
     * just before that, its grant starts a claim of one more heartbeat (the claim runs from the
     * grant, not from the waiter's last heartbeat): 2 x heartbeat.
     */
    private static long deadPartyBoundMs() {
        return Math.max(LEASE_MS, 2 * HEARTBEAT_MS) + RETURN_SLACK_MS;
    }

    private boolean diedBefore(String wid, long at) {
        return dead.stream().anyMatch(w -> w.wid.equals(wid) && w.killedMs <= at);
    }

    private String windows() {
        List<String> windows = new ArrayList<>();
        restarts.forEach(r -> windows.add("[" + r[0] + ", " + (r[0] + LEASE_MS + TOLD_SLACK_MS) + "] (up at " + r[1]
                + ")"));
        return windows.toString();
    }
}
