package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.redis.RedisConnections;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisSentinel;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The library sees {@code READONLY}: the master it is connected to is made a replica by
 * {@code REPLICAOF}, which keeps normal clients connected (Redis 7.0), so the library's next script
 * call is refused as a write on a replica. The library drops that connection and makes a new one at
 * once (not after a lease, nor after Lettuce's backoff), logs one WARN, and sends the refused call
 * once more: through a Sentinel that names the new master, it succeeds there, written once; to the
 * same read-only address, the caller gets a {@link SemaphoreUnavailableException} naming
 * {@code READONLY} within the Redis timeout, the library makes at most one connection a second
 * ({@code ReadOnlyRetirement.READ_ONLY_RECONNECT_SPACING}; before, each connection's recovery renewed,
 * was refused and connected again, dozens a second), and nothing was written.
 */
@Tag("redis-compat")
@Tag("slow")
class ReadOnlyReconnectTest {

    private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(2);
    /** A call refused with READONLY is served on the new master within this (plus the scheduler's lateness). */
    private static final Duration RECONNECTED = Duration.ofSeconds(2);
    /** Long: no renewal runs in the test's windows, so only the test's own calls are counted. */
    private static final SemaphoreSettings SETTINGS = SemaphoreSettings.DEFAULTS.withPermits(40)
            .withLeaseTime(Duration.ofMinutes(3));

    private final Logger logger = (Logger) LoggerFactory.getLogger(RedisConnections.class);
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

    @BeforeEach
    void listen() {
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void stopListening() {
        logger.detachAppender(logs);
    }

    private long warnings() {
        return logs.list.stream().filter(e -> e.getLevel() == Level.WARN).count();
    }

    private long readOnlyWarnings() {
        return logs.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .filter(e -> e.getFormattedMessage().contains("READONLY")).count();
    }

    /** Connections the library made anew (each logged once at INFO). */
    private long reconnects() {
        return logs.list.stream().filter(e -> e.getFormattedMessage().contains("connected to Redis again")).count();
    }

    @Test
    void aMasterDemotedUnderTheLibraryIsLeftAtOnceForTheMasterTheSentinelNamesAndTheRefusedCallSucceedsThere()
            throws Exception {
        try (SchedulingNoise noise = new SchedulingNoise();
             RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry registry = SemaphoreRegistry.builder(sentinel.connectionFactory(REDIS_TIMEOUT))
                     .keyPrefix(sentinel.master().keyPrefix()).redisTimeout(REDIS_TIMEOUT).build()) {
            RedisSemaphore semaphore = registry.semaphore("read-only", SETTINGS);
            SemaphoreKeys keys = SemaphoreKeys.of(sentinel.master().keyPrefix(), "read-only");
            Permit first = semaphore.tryAcquire().orElseThrow();
            RedisServer oldMaster = sentinel.master();
            RedisServer newMaster = sentinel.replica();
            await().atMost(Duration.ofSeconds(10)).until(() -> ScriptSnapshot
                    .take(newMaster.connectionFactory(), keys).holders().containsKey(first.id()));

            // The Sentinel promotes the replica; before it demotes the old master itself (which kills
            // its clients), an operator's REPLICAOF makes it a replica and keeps the library connected.
            sentinel.failover();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> sentinel.currentMasterPort() == newMaster.port());
            oldMaster.adminCommand("REPLICAOF", newMaster.host(), String.valueOf(newMaster.port()));
            assertThat(RedisSentinel.isMaster(oldMaster)).isFalse();
            long warningsBefore = warnings();
            long reconnectsBefore = reconnects();

            // A burst in flight on the demoted master's connection when its first READONLY comes: each
            // refused call goes back in line and is sent again on the new master, none fails.
            int burst = 30;
            long start = System.nanoTime();
            List<CompletableFuture<Permit>> inFlight = new ArrayList<>();
            for (int i = 0; i < burst; i++) {
                inFlight.add(semaphore.acquireAsync(1, Duration.ZERO));
            }
            Optional<Permit> second = semaphore.tryAcquire();
            List<Permit> burstPermits = new ArrayList<>();
            for (CompletableFuture<Permit> call : inFlight) {
                burstPermits.add(call.get(10, TimeUnit.SECONDS));
            }
            long end = System.nanoTime();
            Duration took = Duration.ofNanos(end - start);
            Duration lateness = noise.during(start, end);
            System.out.printf("ReadOnlyReconnectTest sentinel: %d calls refused with READONLY were served on the new"
                    + " master %d ms after they were made; %s%n", burst + 1, took.toMillis(), noise.stop());

            assertThat(second).as("the refused call, sent again to the new master").isPresent();
            assertThat(took).isLessThanOrEqualTo(RECONNECTED.plus(lateness));
            assertThat(readOnlyWarnings()).as("WARNs of READONLY").isEqualTo(1);
            assertThat(warnings() - warningsBefore).as("WARNs").isEqualTo(1);
            assertThat(reconnects() - reconnectsBefore).as("connections made anew").isEqualTo(1);
            // Written once, on the new master, next to the permit the replica had copied.
            ScriptSnapshot state = ScriptSnapshot.take(newMaster.connectionFactory(), keys);
            List<String> expected = new ArrayList<>(List.of(first.id(), second.get().id()));
            burstPermits.forEach(permit -> expected.add(permit.id()));
            assertThat(state.holders().keySet()).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(semaphore.state().used()).isEqualTo(2 + burst);
            for (Permit permit : burstPermits) {
                assertThat(semaphore.release(permit.id())).isTrue();
            }

            // Served on without another reconnect.
            for (int i = 0; i < 5; i++) {
                Permit more = semaphore.tryAcquire().orElseThrow();
                assertThat(semaphore.release(more.id())).isTrue();
            }
            assertThat(semaphore.release(first.id())).isTrue();
            assertThat(semaphore.release(second.get().id())).isTrue();
            assertThat(reconnects() - reconnectsBefore).as("connections made anew").isEqualTo(1);
            assertThat(readOnlyWarnings()).isEqualTo(1);
            assertThat(ScriptSnapshot.take(newMaster.connectionFactory(), keys).holders()).isEmpty();
        }
    }

    @Test
    void aReadOnlyServerReachedAgainFailsTheCallClearlyWithinTheTimeoutWritingNothingWithoutAReconnectStorm()
            throws Exception {
        try (SchedulingNoise noise = new SchedulingNoise();
             RedisServer a = RedisServers.start();
             RedisServer b = RedisServers.start();
             SemaphoreRegistry registry = SemaphoreRegistry.builder(a.connectionFactory(REDIS_TIMEOUT))
                     .keyPrefix(a.keyPrefix()).redisTimeout(REDIS_TIMEOUT).build()) {
            RedisSemaphore semaphore = registry.semaphore("read-only", SETTINGS);
            SemaphoreKeys keys = SemaphoreKeys.of(a.keyPrefix(), "read-only");
            Permit held = semaphore.tryAcquire().orElseThrow();

            // b copies a, takes over as master, and a follows it: a manual failover that keeps a's clients.
            b.adminCommand("REPLICAOF", a.host(), String.valueOf(a.port()));
            await().atMost(Duration.ofSeconds(20)).until(() -> b.info("replication").contains("master_link_status:up")
                    && ScriptSnapshot.take(b.connectionFactory(), keys).holders().containsKey(held.id()));
            b.adminCommand("REPLICAOF", "NO", "ONE");
            a.adminCommand("REPLICAOF", b.host(), String.valueOf(b.port()));
            await().atMost(Duration.ofSeconds(20)).until(() -> a.info("replication").contains("master_link_status:up"));
            ScriptSnapshot before = ScriptSnapshot.take(a.connectionFactory(), keys);
            assertThat(before.holders()).containsOnlyKeys(held.id());
            long reconnectsBefore = reconnects();

            int calls = 5;
            long worst = 0;
            long firstRefusedAt = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                long start = System.nanoTime();
                Throwable refused = catchThrowable(semaphore::tryAcquire);
                long end = System.nanoTime();
                worst = Math.max(worst, end - start);
                assertThat(refused).isInstanceOf(SemaphoreUnavailableException.class)
                        .hasMessageContaining("READONLY");
                assertThat(Duration.ofNanos(end - start)).as("failed within the Redis timeout")
                        .isLessThanOrEqualTo(REDIS_TIMEOUT.plus(noise.during(start, end)));
            }
            Throwable release = catchThrowable(() -> semaphore.release(held.id()));
            assertThat(release).isInstanceOf(SemaphoreUnavailableException.class).hasMessageContaining("READONLY");
            // The renewal of the permit held, refused too, retries every second meanwhile: still no storm.
            Thread.sleep(3000);
            long made = reconnects() - reconnectsBefore;
            long window = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - firstRefusedAt) + 1;
            System.out.printf("ReadOnlyReconnectTest same read-only server: %d calls refused, each within %d ms;"
                    + " %d connections made anew; %s%n", calls + 1, TimeUnit.NANOSECONDS.toMillis(worst), made,
                    noise.stop());
            assertThat(made).as("connections made anew: at most one a second (%d s)", window)
                    .isBetween(1L, window + 1);
            assertThat(readOnlyWarnings()).as("one WARN of READONLY per 30 s").isEqualTo(1);

            // Nothing written: a's keys are as they were.
            ScriptSnapshot after = ScriptSnapshot.take(a.connectionFactory(), keys);
            assertThat(after.holders()).isEqualTo(before.holders());
            assertThat(after.state()).isEqualTo(before.state());
            assertThat(after.queue()).isEqualTo(before.queue());
            assertThat(after.dumps()).isEqualTo(before.dumps());

            // a a master again: served at once.
            a.adminCommand("REPLICAOF", "NO", "ONE");
            Permit again = semaphore.tryAcquire().orElseThrow();
            assertThat(ScriptSnapshot.take(a.connectionFactory(), keys).holders().keySet())
                    .containsExactlyInAnyOrder(held.id(), again.id());
            assertThat(semaphore.release(again.id())).isTrue();
            assertThat(semaphore.release(held.id())).isTrue();
        }
    }
}
