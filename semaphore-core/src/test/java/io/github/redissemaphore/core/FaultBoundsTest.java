package io.github.redissemaphore.core;

import static io.github.redissemaphore.test.FaultAdmin.zcard;
import static io.github.redissemaphore.test.FaultAdmin.zmembers;
import static io.github.redissemaphore.test.FaultAdmin.zscore;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.internal.DefaultRedisSemaphore;
import io.github.redissemaphore.core.redis.SemaphoreKeys;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.FaultAdmin;
import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.TcpProxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Time bounds that hold under faults, on Redis processes of the tests' own:
 *
 * <ul>
 * <li>a. every blocking call returns within max(its wait, command timeout) + 200 ms during an
 *     outage (server stopped), a {@code CLIENT PAUSE ... ALL} and a network partition
 *     ({@link TcpProxy}), also when its wait was queued before the fault began, so the deadline
 *     path is what is timed; afterwards nothing is left behind in Redis;</li>
 * <li>b. renewals of one semaphore do not wait for another semaphore whose cluster node is
 *     stuck, and the stuck one's permit is reported lost by its lease end;</li>
 * <li>c. every kind of script call works on a server whose script cache is empty
 *     ({@code SCRIPT FLUSH}, restart): NOSCRIPT, then EVAL, then the effect is in Redis;</li>
 * <li>d. a holder cut off from Redis learns of its loss by its lease end, before another JVM
 *     is handed the permit.</li>
 * </ul>
 *
 * <p>Every figure is measured with {@link System#nanoTime()} on the caller's side and printed,
 * next to how late a plain JDK timer ran meanwhile (the machine's own noise). The bounds are the
 * issue's targets, not widened for a loaded machine: a wait queued before a fault is answered by
 * design at max(wait, timeout) + 150 ms, which leaves 50 ms for the JVM to wake the caller.
 *
 * <p>Outcomes under a fault: every call that needs Redis ends with
 * {@link SemaphoreUnavailableException} (a wait queued before the fault may also end with a
 * rejection, if Redis answered its cancel); {@link Permit#release()} returns without throwing and
 * retries in the background.
 *
 * <p>Two tests reproduce bugs found while writing these, now fixed: a wait whose acquire reply came
 * late (its deadline was counted from the reply), and a wait on a stuck cluster node (its first
 * wait subscribed with a blocking call).
 */
@RedisTest
class FaultBoundsTest {

    private static final String PREFIX = "semaphore";
    /** The command timeout of every connection factory here. */
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** The issue's target: a blocking call returns within max(its wait, command timeout) + SLACK. */
    private static final Duration SLACK = Duration.ofMillis(200);
    /** A wait shorter than the command timeout, and one longer. */
    private static final Duration SHORT_WAIT = Duration.ofMillis(600);
    private static final Duration LONG_WAIT = Duration.ofMillis(1500);
    /** {@code waitTime} of the semaphores {@code acquire()} is called on. */
    private static final Duration ACQUIRE_WAIT = Duration.ofMillis(1200);
    /** Fault cycles per test of part a. */
    private static final int CYCLES = 3;
    /** A CLIENT PAUSE outlasts every bound of part a (1.7 s from the calls' start) by far. */
    private static final Duration PAUSE = Duration.ofSeconds(3);
    /** How late past its lease end (as this JVM measures it) a loss may be reported. */
    private static final Duration LOSS_SLACK = Duration.ofMillis(100);

    private final List<ExecutorService> pools = new ArrayList<>();

    @AfterEach
    void stopPools() {
        pools.forEach(ExecutorService::shutdownNow);
    }

    // --- a. blocking calls during an outage, a CLIENT PAUSE and a partition -----------------------------

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void blockingCallsReturnWithinTheirBoundWhileRedisIsDown(@Dedicated RedisServer server) throws Exception {
        Fault outage = new Fault("outage", server::stop, server::start);
        blockingCallsReturnInTime(server, server.connectionFactory(TIMEOUT), outage);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void blockingCallsReturnWithinTheirBoundWhileRedisIsPaused(@Dedicated RedisServer server) throws Exception {
        Fault pause = new Fault("pause", () -> server.pause(PAUSE), () -> awaitPauseOver(server));
        blockingCallsReturnInTime(server, server.connectionFactory(TIMEOUT), pause);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void blockingCallsReturnWithinTheirBoundDuringAPartition(@Dedicated RedisServer server) throws Exception {
        try (TcpProxy proxy = TcpProxy.to(server)) {
            Fault partition = new Fault("partition", proxy::partition, proxy::heal);
            blockingCallsReturnInTime(server, proxy.connectionFactory(TIMEOUT), partition);
            System.out.printf("partition: %d connections through the proxy, %d bytes forwarded%n",
                    proxy.acceptedConnections(), proxy.bytesForwarded());
        }
    }

    /**
     * Runs {@link #CYCLES} fault cycles. In each, a holder JVM on a direct connection holds the one
     * permit of {@code queued}; the subject JVM (on {@code subjectFactory}: the server or the proxy)
     * queues three waits for it; then the fault begins, and the subject JVM makes every kind of
     * blocking call on {@code calls} (10 permits, all free). Each call is timed on its own thread.
     */
    private void blockingCallsReturnInTime(RedisServer server, LettuceConnectionFactory subjectFactory,
                                                  Fault fault) throws Exception {
        SemaphoreSettings callsSettings = new SemaphoreSettings(10, Duration.ofSeconds(30), ACQUIRE_WAIT, true, true);
        SemaphoreSettings queuedSettings = new SemaphoreSettings(1, Duration.ofSeconds(30), ACQUIRE_WAIT, true, true);
        SemaphoreKeys callsKeys = SemaphoreKeys.of(PREFIX, "calls");
        SemaphoreKeys queuedKeys = SemaphoreKeys.of(PREFIX, "queued");
        ExecutorService pool = pool(9);
        List<Timed> all = new ArrayList<>();
        try (SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT)).build();
             SemaphoreRegistry subjectJvm = SemaphoreRegistry.builder(subjectFactory).build()) {
            RedisSemaphore blocked = holderJvm.semaphore("queued", queuedSettings);
            RedisSemaphore queued = subjectJvm.semaphore("queued", queuedSettings);
            RedisSemaphore calls = subjectJvm.semaphore("calls", callsSettings);
            for (int cycle = 1; cycle <= CYCLES; cycle++) {
                long cycleStart = System.nanoTime();
                TimerLateness lateness = new TimerLateness();
                pools.add(lateness.timer);
                Permit blocker = await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                        .until(() -> blocked.tryAcquire().orElse(null), Objects::nonNull);
                Permit toRelease = await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                        .until(() -> calls.tryAcquire().orElse(null), Objects::nonNull);

                // Queued before the fault: what is timed is the deadline path.
                long queuedSince = System.nanoTime();
                List<CompletableFuture<Timed>> running = new ArrayList<>(List.of(
                        time(pool, fault.name(), "tryAcquire(600ms), queued before", SHORT_WAIT, true,
                                () -> queued.tryAcquire(SHORT_WAIT)),
                        time(pool, fault.name(), "tryAcquire(1500ms), queued before", LONG_WAIT, true,
                                () -> queued.tryAcquire(LONG_WAIT)),
                        time(pool, fault.name(), "acquire() [waitTime 1200ms], queued before", ACQUIRE_WAIT, true,
                                queued::acquire)));
                await().atMost(SHORT_WAIT).pollInterval(Duration.ofMillis(5))
                        .until(() -> zcard(server, queuedKeys.all().get(2)) == 3);

                long faultBegins = System.nanoTime();
                fault.begin().run();
                long faultOn = System.nanoTime();
                assertThat(faultOn).as("cycle %d: the %s must be in force before the first queued wait ends (it took"
                        + " %d ms to set up), else its deadline path is not what is timed", cycle, fault.name(),
                        millis(faultOn - faultBegins)).isLessThan(queuedSince + SHORT_WAIT.toNanos());

                running.addAll(List.of(
                        time(pool, fault.name(), "tryAcquire()", Duration.ZERO, false, calls::tryAcquire),
                        time(pool, fault.name(), "tryAcquire(600ms)", SHORT_WAIT, false, () -> calls.tryAcquire(SHORT_WAIT)),
                        time(pool, fault.name(), "tryAcquire(1500ms)", LONG_WAIT, false, () -> calls.tryAcquire(LONG_WAIT)),
                        time(pool, fault.name(), "acquire() [waitTime 1200ms]", ACQUIRE_WAIT, false, calls::acquire),
                        time(pool, fault.name(), "Permit.release()", Duration.ZERO, false, () -> {
                            toRelease.release();
                            return null;
                        }),
                        time(pool, fault.name(), "state()", Duration.ZERO, false, calls::state)));
                List<Timed> timed = new ArrayList<>();
                for (CompletableFuture<Timed> call : running) {
                    // Far past every bound: a call that hangs shows up as a failure, not as a test timeout.
                    timed.add(call.get(10, TimeUnit.SECONDS));
                }
                long faultEnds = System.nanoTime();
                fault.end().run();
                long healed = System.nanoTime();
                for (Timed call : timed) {
                    System.out.printf("%s cycle %d: %s%n", fault.name(), cycle, call);
                    if (fault.name().equals("pause")) {
                        assertThat(call.endNanos()).as("%s answered while the pause still held", call.name())
                                .isLessThan(faultOn + PAUSE.toNanos());
                    }
                }
                all.addAll(timed);

                // Afterwards nothing is left behind: every call sent during the fault was undone.
                await().atMost(Duration.ofSeconds(15)).ignoreExceptions().untilAsserted(() -> {
                    assertThat(zcard(server, callsKeys.all().get(2))).as("waiters of calls").isZero();
                    assertThat(zcard(server, queuedKeys.all().get(2))).as("waiters of queued").isZero();
                    assertThat(zmembers(server, callsKeys.all().get(0))).as("holders of calls").isEmpty();
                    assertThat(zmembers(server, queuedKeys.all().get(0))).as("holders of queued")
                            .isSubsetOf(blocker.id());
                });
                long clean = System.nanoTime();
                blocker.release();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> zmembers(server, queuedKeys.all().get(0)).isEmpty());
                System.out.printf("%s cycle %d: fault on %d ms after it began, lifted in %d ms, Redis clean %d ms"
                        + " later; cycle took %d ms; %s%n", fault.name(), cycle, millis(faultOn - faultBegins),
                        millis(healed - faultEnds), millis(clean - healed), millis(System.nanoTime() - cycleStart),
                        lateness.stop());
            }
        }
        report(fault.name(), all);
    }

    /** Prints the worst case of each call and fails on any bound missed or unexpected outcome. */
    private static void report(String fault, List<Timed> all) {
        Map<String, List<Timed>> byCase = new LinkedHashMap<>();
        all.forEach(call -> byCase.computeIfAbsent(call.name(), name -> new ArrayList<>()).add(call));
        List<String> problems = new ArrayList<>();
        System.out.printf("--- %s: worst of %d cycles per call (command timeout %d ms, target max(wait, timeout)"
                + " + %d ms) ---%n", fault, CYCLES, TIMEOUT.toMillis(), SLACK.toMillis());
        byCase.forEach((name, calls) -> {
            Timed worst = Collections.max(calls, (x, y) -> Long.compare(x.elapsedNanos(), y.elapsedNanos()));
            System.out.printf("%s %s returned after %d ms (bound %d ms, %+d ms past max(wait, timeout)); outcomes %s%n",
                    fault, name, worst.elapsed().toMillis(), worst.bound().toMillis(),
                    worst.elapsed().minus(worst.maxWait().compareTo(TIMEOUT) > 0 ? worst.maxWait() : TIMEOUT).toMillis(),
                    calls.stream().map(call -> call.result()).distinct().toList());
            for (Timed call : calls) {
                if (call.elapsed().compareTo(call.bound()) > 0) {
                    problems.add(call + ": past its bound");
                }
                if (!call.allowed().contains(call.result())) {
                    problems.add(call + ": outcome not one of " + call.allowed());
                }
            }
        });
        assertThat(problems).as("calls during a %s", fault).isEmpty();
    }

    /**
     * Reproduces a bug of src/main (see the class comment): a wait whose acquire call is answered
     * late (here behind an 800 ms CLIENT PAUSE, shorter than the 1 s command timeout) gets its
     * deadline at reply + maxWait instead of start + maxWait; {@code deadlinePassed} then finds
     * max(wait, timeout) + 150 ms already past and answers SemaphoreUnavailableException at once,
     * although Redis answers the cancel within a millisecond. Measured: tryAcquire(600ms) after
     * ~1500 ms (bound 1200 ms), tryAcquire(1500ms) after ~2370 ms (bound 1700 ms), both
     * "Redis did not answer in time".
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aWaitSentDuringAPauseShorterThanTheCommandTimeoutEndsWithinItsBound(@Dedicated RedisServer server)
            throws Exception {
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS;
        try (SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT)).build();
             SemaphoreRegistry subjectJvm = SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT)).build()) {
            Permit blocker = holderJvm.semaphore("full", one).tryAcquire().orElseThrow();
            RedisSemaphore full = subjectJvm.semaphore("full", one);
            List<Timed> calls = new ArrayList<>();
            for (Duration wait : List.of(SHORT_WAIT, LONG_WAIT)) {
                server.pause(Duration.ofMillis(800));
                Timed call = time(pool(1), "short pause", "tryAcquire(" + wait.toMillis() + "ms), sent during it",
                        wait, false, () -> full.tryAcquire(wait)).get(10, TimeUnit.SECONDS);
                System.out.println(call);
                calls.add(call);
                awaitPauseOver(server);
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> zcard(server, SemaphoreKeys.of(PREFIX, "full").all().get(2)) == 0);
            }
            blocker.release();
            // Redis answered every call within 800 ms: the waits end with a rejection, in time.
            assertThat(calls).allSatisfy(call -> {
                assertThat(call.elapsed()).as(call.toString()).isLessThanOrEqualTo(call.bound());
                assertThat(call.result()).as(call.toString()).isEqualTo("rejected");
            });
        }
    }

    // --- b. renewals of one semaphore unaffected by another's stuck node ---------------------------------

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void renewalsOfASemaphoreGoOnWhileAnotherSemaphoresNodeIsPaused(@Dedicated RedisCluster cluster)
            throws Exception {
        Duration lease = Duration.ofMillis(1500);
        Duration pause = Duration.ofSeconds(5);
        String a = null;
        String b = null;
        RedisServer nodeA = null;
        RedisServer nodeB = null;
        for (int i = 0; b == null; i++) {
            String name = "renewed-" + i;
            RedisServer node = cluster.nodeFor("{" + name + "}");
            if (a == null) {
                a = name;
                nodeA = node;
            } else if (node != nodeA) {
                b = name;
                nodeB = node;
            }
        }
        RenewalLog renewals = new RenewalLog();
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(lease);
        try (SemaphoreRegistry jvm = SemaphoreRegistry.builder(cluster.connectionFactory(TIMEOUT)).listener(renewals)
                .build()) {
            Permit permitA = jvm.semaphore(a, settings).tryAcquire().orElseThrow();
            Permit permitB = jvm.semaphore(b, settings).tryAcquire().orElseThrow();
            Loss lossA = new Loss(permitA);
            Loss lossB = new Loss(permitB);
            String nameA = a;
            String nameB = b;
            await().atMost(Duration.ofSeconds(5)).until(() -> renewals.count(nameA) >= 2 && renewals.count(nameB) >= 2);

            long pauseAsked = System.nanoTime();
            nodeB.pause(pause);
            long paused = System.nanoTime();
            int renewalsOfABefore = renewals.count(a);

            // A: held throughout the pause, renewed every lease/3 as if nothing happened.
            await().during(pause.minusMillis(300)).atMost(pause.plusSeconds(2)).pollInterval(Duration.ofMillis(20))
                    .until(() -> permitA.isHeld() && !lossA.happened());
            int renewalsOfADuring = renewals.count(a) - renewalsOfABefore;
            long lastRenewalOfB = renewals.last(b);
            long lostB = lossB.at(Duration.ofSeconds(1));
            System.out.printf("cluster: %s (node %d) renewed %d times during the %d ms pause of %s's node %d, last"
                            + " %d ms ago; %s reported lost %d ms after the pause began (%d ms after asking for it),"
                            + " %d ms after the reply of its last renewal (lease %d ms)%n",
                    a, nodeA.port(), renewalsOfADuring, pause.toMillis(), b, nodeB.port(),
                    millis(System.nanoTime() - renewals.last(a)), b, millis(lostB - paused), millis(lostB - pauseAsked),
                    millis(lostB - lastRenewalOfB), lease.toMillis());
            assertThat(lossA.happened()).as("A lost").isFalse();
            assertThat(permitA.isHeld()).isTrue();
            // Renewed every lease/3 = 500 ms: about 9 times in 4.7 s; a loaded machine may skip a few.
            assertThat(renewalsOfADuring).as("renewals of A during the pause").isGreaterThanOrEqualTo(6);
            assertThat(millis(System.nanoTime() - renewals.last(a))).as("ms since A's last renewal")
                    .isLessThan(lease.toMillis() / 3 * 2);
            assertThat(lossB.heldWhenLost()).as("B isHeld() when onLost ran").isFalse();
            assertThat(permitB.isHeld()).isFalse();
            // Its last successful renewal left before the pause: its lease ends by pause + lease.
            assertThat(millis(lostB - paused)).as("B lost, ms after the pause began")
                    .isLessThanOrEqualTo(lease.plus(LOSS_SLACK).toMillis())
                    // not before the end of a lease renewed in the last tick before the pause
                    .isGreaterThan(lease.toMillis() / 2);
            assertThat(millis(lostB - lastRenewalOfB)).as("B lost, ms after its last renewal came back")
                    .isLessThanOrEqualTo(lease.plus(LOSS_SLACK).toMillis());
            assertThat(lastRenewalOfB).as("B's last renewal came back before the pause").isLessThan(paused);

            awaitPauseOver(nodeB);
            permitA.release();
            assertThat(cluster.keys(PREFIX + ":{" + a + "}:holders")).isEmpty();
        }
    }

    /**
     * Reproduces a bug of src/main (see the class comment): on a Redis Cluster 7+, a wait first
     * subscribes its semaphore's sharded inbox channel with a synchronous SSUBSCRIBE on the
     * caller's thread ({@code ShardedInbox.listenFor}, from {@code begin}), which waits up to the
     * command timeout when the node is stuck, before the acquire call waits its own command
     * timeout; a failed subscription is not remembered, so every wait pays it again. Measured:
     * tryAcquire(600ms) after ~2000 ms (bound 1200 ms), each time; acquireAsync also blocks ~2 s.
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aWaitOnASemaphoreWhoseClusterNodeIsPausedEndsWithinItsBound(@Dedicated RedisCluster cluster)
            throws Exception {
        String name = "stuck";
        RedisServer node = cluster.nodeFor("{" + name + "}");
        try (SemaphoreRegistry jvm = SemaphoreRegistry.builder(cluster.connectionFactory(TIMEOUT)).build()) {
            RedisSemaphore semaphore = jvm.semaphore(name);
            node.pause(Duration.ofSeconds(5));
            List<Timed> calls = new ArrayList<>();
            for (int i = 1; i <= 2; i++) {
                Timed call = time(pool(1), "paused cluster node", "tryAcquire(600ms) #" + i, SHORT_WAIT, false,
                        () -> semaphore.tryAcquire(SHORT_WAIT)).get(10, TimeUnit.SECONDS);
                System.out.println(call);
                calls.add(call);
            }
            awaitPauseOver(node);
            assertThat(calls).allSatisfy(call -> {
                assertThat(call.elapsed()).as(call.toString()).isLessThanOrEqualTo(call.bound());
                assertThat(call.allowed()).as(call.toString()).contains(call.result());
            });
        }
    }

    // --- the proxy itself --------------------------------------------------------------------------------

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void theProxyHoldsBothDirectionsDuringAPartitionWithoutClosingAnything(@Dedicated RedisServer server)
            throws Exception {
        TcpProxy proxy = TcpProxy.to(server);
        try (proxy; java.net.Socket socket = new java.net.Socket(proxy.host(), proxy.port())) {
            socket.setSoTimeout(300);
            var in = socket.getInputStream();
            var out = socket.getOutputStream();
            byte[] ping = "PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            out.write(ping);
            assertThat(new String(in.readNBytes(7), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
            assertThat(proxy.openConnections()).isEqualTo(1);

            proxy.partition();
            long totalBefore = server.totalCommandsProcessed();
            out.write(ping);
            // Silence, not an error: nothing comes back, the connection stays open, Redis sees nothing.
            assertThat(org.assertj.core.api.Assertions.catchThrowable(in::read))
                    .isInstanceOf(java.net.SocketTimeoutException.class);
            assertThat(proxy.openConnections()).isEqualTo(1);
            // The admin call itself is the one command Redis got meanwhile.
            assertThat(server.totalCommandsProcessed() - totalBefore).isEqualTo(1);
            // A connection made during the partition is accepted, but carries nothing either.
            try (java.net.Socket late = new java.net.Socket(proxy.host(), proxy.port())) {
                late.setSoTimeout(300);
                late.getOutputStream().write(ping);
                assertThat(org.assertj.core.api.Assertions.catchThrowable(late.getInputStream()::read))
                        .isInstanceOf(java.net.SocketTimeoutException.class);
                await().atMost(Duration.ofSeconds(2)).until(() -> proxy.openConnections() == 2);

                proxy.heal();
                // What was held is delivered, in order, on the same connections.
                late.setSoTimeout(2000);
                assertThat(new String(late.getInputStream().readNBytes(7), java.nio.charset.StandardCharsets.US_ASCII))
                        .isEqualTo("+PONG\r\n");
            }
            socket.setSoTimeout(2000);
            assertThat(new String(in.readNBytes(7), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
            out.write(ping);
            assertThat(new String(in.readNBytes(7), java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
            await().atMost(Duration.ofSeconds(2)).until(() -> proxy.openConnections() == 1);
        }
        // Closed: its one thread is gone, its port too.
        await().atMost(Duration.ofSeconds(5)).until(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(thread -> thread.getName().equals("tcp-proxy-" + proxy.port())));
        assertThat(io.github.redissemaphore.test.FreePorts.isListening(proxy.host(), proxy.port())).isFalse();
    }

    // --- c. every kind of script call on an empty script cache -------------------------------------------

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void everyKindOfCallWorksAfterScriptFlush(@Dedicated RedisServer server) throws Exception {
        everyKindOfCallWorksOnAnEmptyScriptCache(server, false);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void everyKindOfCallWorksAfterARestart(@Dedicated RedisServer server) throws Exception {
        everyKindOfCallWorksOnAnEmptyScriptCache(server, true);
    }

    /**
     * Each step: set up (its own script not used), empty the script cache (SCRIPT FLUSH, or a
     * restart before the set-up, which uses only other scripts), make the call, see its effect
     * in the keys, and count the EVAL Redis ran: exactly one, sent because EVALSHA answered NOSCRIPT.
     */
    private void everyKindOfCallWorksOnAnEmptyScriptCache(RedisServer server, boolean restart) throws Exception {
        String how = restart ? "restart" : "SCRIPT FLUSH";
        // Ticks of waiters far apart, so no renewal runs while a wait is timed.
        LettuceConnectionFactory subjectFactory = server.connectionFactory(TIMEOUT);
        LettuceConnectionFactory holderFactory = server.connectionFactory(TIMEOUT);
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS;
        SemaphoreSettings renewed = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(1500));
        SemaphoreKeys oneKeys = SemaphoreKeys.of(PREFIX, "one");
        SemaphoreKeys renewedKeys = SemaphoreKeys.of(PREFIX, "renewed");
        try (SemaphoreRegistry subjectJvm = SemaphoreRegistry.builder(subjectFactory)
                .waiterTick(Duration.ofSeconds(5)).waiterHeartbeat(Duration.ofSeconds(10)).build();
             SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(holderFactory)
                     .waiterTick(Duration.ofSeconds(5)).waiterHeartbeat(Duration.ofSeconds(10)).build()) {
            RedisSemaphore subject = subjectJvm.semaphore("one", one);
            RedisSemaphore holder = holderJvm.semaphore("one", one);
            RedisSemaphore renewing = subjectJvm.semaphore("renewed", renewed);
            String holders = oneKeys.all().get(0);
            String queue = oneKeys.all().get(2);
            AtomicReference<Permit> permit = new AtomicReference<>();
            AtomicReference<Permit> blocker = new AtomicReference<>();
            AtomicReference<CompletableFuture<Permit>> waiting = new AtomicReference<>();
            AtomicReference<Thread> waiter = new AtomicReference<>();
            AtomicReference<Object> waiterOutcome = new AtomicReference<>();
            AtomicReference<Double> leaseEnd = new AtomicReference<>();
            Runnable takePermit = () -> permit.set(subject.tryAcquire().orElseThrow());
            Runnable block = () -> blocker.set(holder.tryAcquire().orElseThrow());

            List<Step> steps = List.of(
                    new Step("acquire", () -> { }, takePermit, () -> {
                        assertThat(zmembers(server, holders)).containsExactly(permit.get().id());
                        permit.get().release();
                    }),
                    new Step("release", takePermit, () -> permit.get().release(),
                            () -> assertThat(zmembers(server, holders)).isEmpty()),
                    new Step("renewal tick", () -> permit.set(renewing.tryAcquire().orElseThrow()), () -> {
                        // Any renewal Redis runs from now on must load the script first.
                        leaseEnd.set(zscore(server, renewedKeys.all().get(0), permit.get().id()));
                        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20)).until(() ->
                                zscore(server, renewedKeys.all().get(0), permit.get().id()) > leaseEnd.get());
                    }, () -> {
                        assertThat(permit.get().isHeld()).isTrue();
                        permit.get().release();
                        assertThat(zmembers(server, renewedKeys.all().get(0))).isEmpty();
                    }),
                    new Step("cancel at a wait's deadline", () -> {
                        block.run();
                        waiting.set(subject.acquireAsync(1, Duration.ofMillis(1500)));
                        await().atMost(Duration.ofSeconds(1)).until(() -> zcard(server, queue) == 1);
                    }, () -> assertThat(waiting.get()).failsWithin(Duration.ofSeconds(5)).withThrowableThat()
                            .havingCause().isInstanceOf(SemaphoreRejectedException.class), () -> {
                        assertThat(zcard(server, queue)).isZero();
                        assertThat(zmembers(server, holders)).containsExactly(blocker.get().id());
                        blocker.get().release();
                    }),
                    new Step("clean-up after an interrupt", () -> {
                        block.run();
                        Thread thread = new Thread(() -> {
                            try {
                                waiterOutcome.set(subject.tryAcquire(Duration.ofSeconds(10)));
                            } catch (InterruptedException | RuntimeException e) {
                                waiterOutcome.set(e);
                            }
                        }, "fault-interrupted-waiter");
                        thread.setDaemon(true);
                        thread.start();
                        waiter.set(thread);
                        await().atMost(Duration.ofSeconds(1)).until(() -> zcard(server, queue) == 1);
                    }, () -> {
                        waiter.get().interrupt();
                        await().atMost(Duration.ofSeconds(2)).until(() -> !waiter.get().isAlive());
                        assertThat(waiterOutcome.get()).isInstanceOf(InterruptedException.class);
                        await().atMost(Duration.ofSeconds(5)).until(() -> zcard(server, queue) == 0);
                    }, () -> {
                        assertThat(zmembers(server, holders)).containsExactly(blocker.get().id());
                        blocker.get().release();
                    }),
                    new Step("clean-up after future.cancel", () -> {
                        block.run();
                        waiting.set(subject.acquireAsync(1, Duration.ofSeconds(10)));
                        await().atMost(Duration.ofSeconds(1)).until(() -> zcard(server, queue) == 1);
                    }, () -> {
                        assertThat(waiting.get().cancel(true)).isTrue();
                        await().atMost(Duration.ofSeconds(5)).until(() -> zcard(server, queue) == 0);
                    }, () -> {
                        assertThat(zmembers(server, holders)).containsExactly(blocker.get().id());
                        blocker.get().release();
                    }),
                    new Step("state()", takePermit, () -> assertThat(subject.state().holders())
                            .extracting(SemaphoreState.Holder::permitId).containsExactly(permit.get().id()),
                            () -> permit.get().release()),
                    new Step("forceRelease", takePermit, () -> assertThat(((DefaultRedisSemaphore) subject)
                            .forceRelease(permit.get().id())).isTrue(), () -> {
                        assertThat(zmembers(server, holders)).isEmpty();
                        permit.get().release();
                    }));

            List<String> counted = new ArrayList<>();
            for (Step step : steps) {
                if (restart) {
                    String before = FaultAdmin.runId(server);
                    server.stop();
                    server.start();
                    assertThat(FaultAdmin.runId(server)).isNotEqualTo(before);
                    awaitConnected(subjectFactory);
                    awaitConnected(holderFactory);
                }
                step.setup().run();
                Map<String, Long> before = server.commandCalls();
                if (!restart) {
                    FaultAdmin.scriptFlush(server);
                }
                long started = System.nanoTime();
                step.act().run();
                long took = System.nanoTime() - started;
                Map<String, Long> after = server.commandCalls();
                long evals = after.getOrDefault("eval", 0L) - before.getOrDefault("eval", 0L);
                long evalshas = after.getOrDefault("evalsha", 0L) - before.getOrDefault("evalsha", 0L);
                String line = String.format("after %s: %s took %d ms, %d EVAL, %d EVALSHA", how, step.name(),
                        millis(took), evals, evalshas);
                System.out.println(line);
                counted.add(line);
                assertThat(evals).as("EVAL calls of '%s' after %s (EVALSHA answered NOSCRIPT)", step.name(), how)
                        .isEqualTo(1);
                step.check().run();
                await().atMost(Duration.ofSeconds(5)).until(() -> zcard(server, queue) == 0
                        && zmembers(server, holders).isEmpty() && zmembers(server, renewedKeys.all().get(0)).isEmpty());
            }
            assertThat(counted).hasSize(steps.size());
        }
    }

    private static void awaitConnected(LettuceConnectionFactory factory) {
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
            try (RedisConnection connection = factory.getConnection()) {
                return "PONG".equals(connection.ping());
            }
        });
    }

    /** One kind of call: set-up (with other scripts only), the call itself, then a check of its effect. */
    private record Step(String name, Runnable setup, Runnable act, Runnable check) {
    }

    // --- d. a lease that ends while Redis is unreachable ---------------------------------------------------

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aHolderCutOffByAPartitionLearnsOfItsLossBeforeAnotherJvmIsGrantedThePermit(@Dedicated RedisServer server)
            throws Exception {
        Duration lease = Duration.ofSeconds(3);
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(lease);
        RenewalLog renewals = new RenewalLog();
        try (TcpProxy proxy = TcpProxy.to(server);
             SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(proxy.connectionFactory(TIMEOUT))
                     .listener(renewals).build();
             SemaphoreRegistry otherJvm = SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT)).build()) {
            Permit held = holderJvm.semaphore("cut-off", settings).tryAcquire().orElseThrow();
            Loss loss = new Loss(held);
            CompletableFuture<Permit> other = otherJvm.semaphore("cut-off", settings)
                    .acquireAsync(1, Duration.ofSeconds(15));
            // Stamped by the thread that completes the other JVM's wait, the moment it does.
            CompletableFuture<GrantSeen> grant = other.thenApply(permit -> new GrantSeen(System.nanoTime(),
                    held.isHeld(), loss.happened()));
            await().atMost(Duration.ofSeconds(2))
                    .until(() -> zcard(server, SemaphoreKeys.of(PREFIX, "cut-off").all().get(2)) == 1);
            await().atMost(Duration.ofSeconds(3)).until(() -> renewals.count("cut-off") >= 1);

            long asked = System.nanoTime();
            proxy.partition();
            long cut = System.nanoTime();
            GrantSeen granted = grant.get(lease.plusSeconds(5).toMillis(), TimeUnit.MILLISECONDS);
            long lostAt = loss.at(Duration.ofSeconds(1));
            long lastRenewal = renewals.last("cut-off");
            System.out.printf("partition: onLost at %d ms, the other JVM's grant at %d ms after the partition"
                            + " (lease %d ms; the last renewal came back %d ms before the partition, so the lease"
                            + " ended locally by %d ms); the grant came %d ms after onLost; at the grant the holder's"
                            + " isHeld() was %s%n", millis(lostAt - cut), millis(granted.at() - cut), lease.toMillis(),
                    millis(cut - lastRenewal), millis(lastRenewal + lease.toNanos() - cut), millis(granted.at() - lostAt),
                    granted.holderHeld());
            assertThat(granted.holderHeld()).as("the holder's isHeld() when the other JVM got the permit").isFalse();
            assertThat(granted.lossReported()).as("onLost had run when the other JVM got the permit").isTrue();
            assertThat(lostAt).as("onLost no later than the other JVM's grant").isLessThanOrEqualTo(granted.at());
            assertThat(loss.heldWhenLost()).isFalse();
            assertThat(millis(lostAt - asked)).as("onLost, ms after the partition")
                    .isLessThanOrEqualTo(lease.plus(LOSS_SLACK).toMillis());
            assertThat(millis(lostAt - lastRenewal)).as("onLost, ms after the last renewal came back")
                    .isLessThanOrEqualTo(lease.plus(LOSS_SLACK).toMillis());
            assertThat(held.isHeld()).isFalse();

            proxy.heal();
            other.join().release();
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aHolderLearnsOfItsLossByItsLeaseEndWhileRedisIsDown(@Dedicated RedisServer server) throws Exception {
        Duration lease = Duration.ofSeconds(3);
        RenewalLog renewals = new RenewalLog();
        try (SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(server.connectionFactory(TIMEOUT))
                .listener(renewals).build()) {
            Permit held = holderJvm.semaphore("stopped", SemaphoreSettings.DEFAULTS.withLeaseTime(lease))
                    .tryAcquire().orElseThrow();
            Loss loss = new Loss(held);
            await().atMost(Duration.ofSeconds(3)).until(() -> renewals.count("stopped") >= 1);

            long asked = System.nanoTime();
            server.stop();
            long stopped = System.nanoTime();
            long lostAt = loss.at(lease.plusSeconds(3));
            long lastRenewal = renewals.last("stopped");
            System.out.printf("outage: onLost at %d ms after the server was stopped (%d ms after asking it to stop;"
                    + " lease %d ms; the last renewal came back %d ms before the stop, so the lease ended locally"
                    + " by %d ms)%n", millis(lostAt - stopped), millis(lostAt - asked), lease.toMillis(),
                    millis(stopped - lastRenewal), millis(lastRenewal + lease.toNanos() - stopped));
            assertThat(loss.heldWhenLost()).isFalse();
            assertThat(held.isHeld()).isFalse();
            assertThat(millis(lostAt - stopped)).as("onLost, ms after the server stopped")
                    .isLessThanOrEqualTo(lease.plus(LOSS_SLACK).toMillis());
            assertThat(millis(lostAt - lastRenewal)).as("onLost, ms after the last renewal came back")
                    .isLessThanOrEqualTo(lease.plus(LOSS_SLACK).toMillis());
        }
    }

    // --- support ---------------------------------------------------------------------------------------------

    /** A fault: {@code begin} returns once it is in force, {@code end} once it is lifted. */
    private record Fault(String name, Runnable begin, Runnable end) {
    }

    /** One timed call: when it started and returned, and what it returned (value or exception type). */
    private record Timed(String fault, String name, Duration maxWait, boolean queuedBefore, long startNanos,
                         long endNanos, String result) {

        long elapsedNanos() {
            return endNanos - startNanos;
        }

        Duration elapsed() {
            return Duration.ofNanos(elapsedNanos());
        }

        /** max(wait, command timeout) + 200 ms */
        Duration bound() {
            return (maxWait.compareTo(TIMEOUT) > 0 ? maxWait : TIMEOUT).plus(SLACK);
        }

        /**
         * What Redis being unreachable may answer: SemaphoreUnavailableException; a wait queued
         * before may also end with a rejection; release() never throws.
         */
        Set<String> allowed() {
            if (name.equals("Permit.release()")) {
                return Set.of("returned");
            }
            if (queuedBefore) {
                return Set.of("SemaphoreUnavailableException", "rejected", "SemaphoreRejectedException");
            }
            return Set.of("SemaphoreUnavailableException");
        }

        @Override
        public String toString() {
            return String.format("%s %s returned after %d ms (bound %d ms): %s", fault, name, elapsed().toMillis(),
                    bound().toMillis(), result);
        }
    }

    private static CompletableFuture<Timed> time(ExecutorService pool, String fault, String name, Duration wait,
                                                 boolean queuedBefore, Callable<?> call) {
        return CompletableFuture.supplyAsync(() -> {
            long start = System.nanoTime();
            Object value = null;
            Throwable error = null;
            try {
                value = call.call();
            } catch (Throwable e) {
                error = e;
            }
            long end = System.nanoTime();
            return new Timed(fault, name, wait, queuedBefore, start, end,
                    error != null ? error.getClass().getSimpleName() : outcome(value));
        }, pool);
    }

    /** Names what a call returned; a permit (unexpected while Redis is unreachable) goes back. */
    private static String outcome(Object value) {
        if (value instanceof Optional<?> optional) {
            optional.ifPresent(permit -> ((Permit) permit).release());
            return optional.isPresent() ? "permit" : "rejected";
        }
        if (value instanceof Permit permit) {
            permit.release();
            return "permit";
        }
        if (value instanceof SemaphoreState) {
            return "state";
        }
        return value == null ? "returned" : value.toString();
    }

    /** Returns once a CLIENT PAUSE of {@code server} is over: an admin call waits for it. */
    private static void awaitPauseOver(RedisServer server) {
        server.info("server");
    }

    /** The other JVM's grant as seen the moment it completed. */
    private record GrantSeen(long at, boolean holderHeld, boolean lossReported) {
    }

    /** Records when a permit's onLost ran, and whether isHeld() was false then. */
    private static final class Loss {

        private final CompletableFuture<Long> at = new CompletableFuture<>();
        private volatile boolean heldWhenLost = true;

        Loss(Permit permit) {
            permit.onLost(lost -> {
                long now = System.nanoTime();
                heldWhenLost = lost.isHeld();
                at.complete(now);
            });
        }

        boolean happened() {
            return at.isDone();
        }

        boolean heldWhenLost() {
            return heldWhenLost;
        }

        long at(Duration within) throws Exception {
            return at.get(within.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * How late a plain JDK timer of this JVM runs meanwhile (one task every 10 ms): the machine's
     * own scheduling noise, printed next to the figures so a late answer can be told apart from it.
     */
    private static final class TimerLateness {

        private static final long PERIOD = TimeUnit.MILLISECONDS.toNanos(10);
        private final java.util.concurrent.ScheduledExecutorService timer =
                Executors.newSingleThreadScheduledExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "fault-timer-lateness");
                    thread.setDaemon(true);
                    return thread;
                });
        private final long start = System.nanoTime();
        private final AtomicLong ticks = new AtomicLong();
        private final AtomicLong worst = new AtomicLong();

        TimerLateness() {
            timer.scheduleAtFixedRate(() -> {
                long late = System.nanoTime() - (start + PERIOD * (ticks.incrementAndGet()));
                worst.accumulateAndGet(late, Math::max);
            }, PERIOD, PERIOD, TimeUnit.NANOSECONDS);
        }

        /** Stops the probe. @return a description of the worst lateness seen */
        String stop() {
            timer.shutdownNow();
            return "a 10 ms JDK timer ran up to " + millis(worst.get()) + " ms late meanwhile";
        }
    }

    /** Counts successful renewals per semaphore, with the time the last one came back. */
    private static final class RenewalLog implements SemaphoreListener {

        private final Map<String, Integer> counts = new java.util.concurrent.ConcurrentHashMap<>();
        private final Map<String, Long> last = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void leasesRenewed(String semaphore, int leases) {
            long now = System.nanoTime();
            last.put(semaphore, now);
            counts.merge(semaphore, 1, Integer::sum);
        }

        int count(String semaphore) {
            return counts.getOrDefault(semaphore, 0);
        }

        long last(String semaphore) {
            return last.get(semaphore);
        }
    }

    private ExecutorService pool(int threads) {
        ExecutorService pool = Executors.newFixedThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable, "fault-caller");
            thread.setDaemon(true);
            return thread;
        });
        pools.add(pool);
        return pool;
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
