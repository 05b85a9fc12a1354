package io.github.redissemaphore.core;

import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;
import io.github.redissemaphore.test.TcpProxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * An outage never hangs a caller, whatever the connection factory's command timeout (here 60 s,
 * Spring Boot's default): on Redis processes of the tests' own, a holder whose work is done gets
 * its release() back at once, new calls and callers queued before the outage fail within the
 * library's Redis timeout (2 s by default), and
 * once Redis answers again (a restart, a healed partition) calls succeed within 2 s, with what
 * ended meanwhile gone from Redis with the first exchange.
 *
 * <p>Each figure is measured with {@link System#nanoTime()} and printed; each bound is widened by
 * how late a 10 ms JDK timer ran while the measured call did ({@link SchedulingNoise}), so a loaded
 * machine does not fail a library that keeps its time.
 */
@Tag("redis-compat")
@Tag("slow")
@RedisTest
class OutageNeverHangsTest {

    /** Spring Boot's default {@code spring.data.redis.timeout} (Lettuce's). */
    private static final Duration FACTORY_TIMEOUT = Duration.ofSeconds(60);
    /** The library's default Redis timeout. */
    private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(2);
    /** The library's default waiter tick. */
    private static final Duration WAITER_TICK = Duration.ofSeconds(1);
    /** What a bound leaves for the JVM to wake the caller. */
    private static final Duration SLACK = Duration.ofMillis(300);
    /** A holder whose work is done returns within this. */
    private static final Duration RELEASE_BOUND = Duration.ofSeconds(1);
    /** Calls succeed within this once Redis answers again. */
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(2);
    /** Long enough for Lettuce's reconnect backoff to grow to seconds (1, 2, 4... ms a try). */
    private static final Duration OUTAGE = Duration.ofSeconds(6);

    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopNoise() {
        noise.close();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void whileRedisIsDownHoldersReturnAtOnceCallsFailWithinTheTimeoutAndARestartedRedisServesWithin2s(
            @Dedicated RedisServer server) throws Exception {
        DeferredReleases deferred = new DeferredReleases();
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(FACTORY_TIMEOUT))
                .listener(deferred).build()) {
            RedisSemaphore semaphore = registry.semaphore("burst",
                    new SemaphoreSettings(3, Duration.ofSeconds(30), Duration.ofSeconds(30), true, true));
            List<Permit> holders = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                holders.add(semaphore.tryAcquire().orElseThrow());
            }
            List<Stamped> queued = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                queued.add(new Stamped(semaphore.acquireAsync(1, Duration.ofSeconds(30))));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().waiters().size() == 3);

            server.kill();
            long down = System.nanoTime();
            // The holders' work ends now: each gives its permit back.
            List<Long> releases = new ArrayList<>();
            for (Permit holder : holders) {
                long start = System.nanoTime();
                holder.release();
                long end = System.nanoTime();
                releases.add(millis(end - start));
                assertWithin("release() of a holder", start, end, RELEASE_BOUND);
            }
            long asked = System.nanoTime();
            Throwable newCall = catchThrowable(semaphore::tryAcquire);
            long failed = System.nanoTime();
            assertThat(newCall).isInstanceOf(SemaphoreUnavailableException.class);
            assertWithin("a new call", asked, failed, REDIS_TIMEOUT.plus(SLACK));
            for (Stamped waiter : queued) {
                long ended = waiter.ended(Duration.ofSeconds(10));
                assertThat(waiter.error()).isInstanceOf(SemaphoreUnavailableException.class);
                assertWithin("a queued call, from the kill", down, ended, REDIS_TIMEOUT.plus(SLACK));
            }
            assertThat(deferred.count()).as("releases that went on in the background").isEqualTo(3);

            await().during(OUTAGE.minus(Duration.ofNanos(System.nanoTime() - down))).atMost(OUTAGE.plusSeconds(5))
                    .until(() -> !server.isRunning());
            server.start();
            long up = System.nanoTime();
            Permit first = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                    .ignoreExceptions().until(() -> semaphore.tryAcquire().orElse(null), Objects::nonNull);
            long served = System.nanoTime();
            first.release();
            System.out.printf("Redis killed (factory timeout %d s, Redis timeout %d s): 3 holders' release() took"
                            + " %s ms; a new call failed after %d ms; 3 queued calls failed %s ms after the kill;"
                            + " after %d s down, the first call succeeded %d ms after Redis answered again%n",
                    FACTORY_TIMEOUT.toSeconds(), REDIS_TIMEOUT.toSeconds(), releases, millis(failed - asked),
                    queued.stream().map(waiter -> millis(waiter.at() - down)).toList(), OUTAGE.toSeconds(),
                    millis(served - up));
            assertWithin("the first call after the restart", up, served, RECOVERY_BOUND);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void afterAPartitionHealsCallsSucceedAtOnceAndWhatEndedDuringItIsGoneFromRedis(@Dedicated RedisServer server)
            throws Exception {
        SemaphoreSettings settings = new SemaphoreSettings(3, Duration.ofSeconds(30), Duration.ofSeconds(30), true,
                true);
        try (TcpProxy proxy = TcpProxy.to(server);
             // Heartbeats far longer than the partition: what leaves Redis leaves by a call, not by expiry.
             SemaphoreRegistry cutOff = SemaphoreRegistry.builder(proxy.connectionFactory(FACTORY_TIMEOUT))
                     .waiterHeartbeat(Duration.ofSeconds(30)).build();
             SemaphoreRegistry other = SemaphoreRegistry.builder(server.connectionFactory(FACTORY_TIMEOUT)).build()) {
            RedisSemaphore semaphore = cutOff.semaphore("cut", settings);
            RedisSemaphore seen = other.semaphore("cut", settings);
            Permit elsewhere = seen.tryAcquire().orElseThrow();
            List<Permit> holders = List.of(semaphore.tryAcquire().orElseThrow(), semaphore.tryAcquire().orElseThrow());
            List<Stamped> queued = List.of(new Stamped(semaphore.acquireAsync(1, Duration.ofSeconds(30))),
                    new Stamped(semaphore.acquireAsync(1, Duration.ofSeconds(30))));
            await().atMost(Duration.ofSeconds(5)).until(() -> seen.state().waiters().size() == 2);

            proxy.partition();
            long cut = System.nanoTime();
            for (Permit holder : holders) {
                long start = System.nanoTime();
                holder.release();
                assertWithin("release() of a holder cut off", start, System.nanoTime(), RELEASE_BOUND);
            }
            for (Stamped waiter : queued) {
                long ended = waiter.ended(Duration.ofSeconds(10));
                assertThat(waiter.error()).isInstanceOf(SemaphoreUnavailableException.class);
                assertWithin("a queued call, from the partition", cut, ended, REDIS_TIMEOUT.plus(SLACK));
            }
            // Redis still has all of them: nothing crossed the partition.
            SemaphoreState during = seen.state();
            assertThat(during.holders()).hasSize(3);
            assertThat(during.waiters()).hasSize(2);

            proxy.heal();
            long healed = System.nanoTime();
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> {
                SemaphoreState now = seen.state();
                return now.holders().size() == 1 && now.waiters().isEmpty();
            });
            long cleared = System.nanoTime();
            Permit first = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .ignoreExceptions().until(() -> semaphore.tryAcquire().orElse(null), Objects::nonNull);
            long served = System.nanoTime();
            System.out.printf("partition healed: what ended during it gone from Redis %d ms after, the first call of"
                            + " the cut-off JVM succeeded %d ms after%n", millis(cleared - healed),
                    millis(served - healed));
            assertWithin("what ended during the partition gone from Redis", healed, cleared, Duration.ofSeconds(1));
            assertWithin("the first call after the partition healed", healed, served, RECOVERY_BOUND);
            first.release();
            elsewhere.release();
        }
    }

    /**
     * A restart drops the inbox's subscription too; it is made anew as soon as the library's
     * connection is, not when the subscription's own reconnect backoff lets it: a hand-off then
     * comes through it, although the next tick is 5 s away.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theInboxSubscribesAgainAsSoonAsRedisIsBack(@Dedicated RedisServer server) throws Exception {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(FACTORY_TIMEOUT))
                .waiterTick(Duration.ofSeconds(5)).waiterHeartbeat(Duration.ofSeconds(30)).build()) {
            RedisSemaphore semaphore = registry.semaphore("inbox-back");
            semaphore.tryAcquire().orElseThrow().release();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> RedisOutageTest.inboxSubscriptions(server, "semaphore") == 1);

            server.kill();
            await().during(OUTAGE).atMost(OUTAGE.plusSeconds(5)).until(() -> !server.isRunning());
            server.start();
            long up = System.nanoTime();
            Permit permit = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .ignoreExceptions().until(() -> semaphore.tryAcquire().orElse(null), Objects::nonNull);
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> RedisOutageTest.inboxSubscriptions(server, "semaphore") == 1);
            long subscribed = System.nanoTime();
            System.out.printf("after %d s down, the inbox subscribed again %d ms after Redis answered%n",
                    OUTAGE.toSeconds(), millis(subscribed - up));
            assertWithin("the inbox subscribed again", up, subscribed, RECOVERY_BOUND);

            CompletableFuture<Permit> waiter = semaphore.acquireAsync(1, Duration.ofSeconds(10));
            await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().waiters().size() == 1);
            permit.release();
            waiter.get(2, TimeUnit.SECONDS).release();
        }
    }

    /** A caller queued before a pause shorter than the Redis timeout keeps its place, and gets its permit. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aQueuedCallerWaitsOnWhenRedisAnswersAgainWithinTheTimeout(@Dedicated RedisServer server) throws Exception {
        try (SemaphoreRegistry holderJvm = SemaphoreRegistry.builder(server.connectionFactory(FACTORY_TIMEOUT)).build();
             SemaphoreRegistry waiterJvm = SemaphoreRegistry.builder(server.connectionFactory(FACTORY_TIMEOUT))
                     .build()) {
            Permit held = holderJvm.semaphore("paused").tryAcquire().orElseThrow();
            CompletableFuture<Permit> waiter = waiterJvm.semaphore("paused").acquireAsync(1, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> holderJvm.semaphore("paused").state().waiters().size() == 1);

            // Every heartbeat sent meanwhile is answered when the pause ends, within the timeout.
            server.pause(REDIS_TIMEOUT.minusMillis(700));
            await().during(REDIS_TIMEOUT.plus(WAITER_TICK)).atMost(Duration.ofSeconds(10))
                    .until(() -> !waiter.isDone());
            held.release();
            waiter.get(5, TimeUnit.SECONDS).release();
        }
    }

    /** The bound is the library's, also where the factory's is longer: here 300 ms against 60 s. */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aRedisTimeoutOfItsOwnBoundsEveryCall(@Dedicated RedisServer server) {
        Duration timeout = Duration.ofMillis(300);
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(FACTORY_TIMEOUT))
                .redisTimeout(timeout).build()) {
            RedisSemaphore semaphore = registry.semaphore("bounded");
            semaphore.tryAcquire().orElseThrow().release();
            server.pause(Duration.ofSeconds(2));
            long start = System.nanoTime();
            Throwable failure = catchThrowable(semaphore::state);
            long end = System.nanoTime();
            assertThat(failure).isInstanceOf(SemaphoreUnavailableException.class)
                    .hasMessageContaining("300");
            assertWithin("state() during a pause", start, end, timeout.plus(SLACK));
        }
    }

    @Test
    void aRedisTimeoutOutOfRangeIsRefusedNamingIt(RedisServer server) {
        SemaphoreRegistry.Builder builder = SemaphoreRegistry.builder(server.connectionFactory());
        assertThatThrownBy(() -> builder.redisTimeout(Duration.ofMillis(99)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("redisTimeout must be between 100 ms and 60000 ms, but was 99 ms");
        assertThatThrownBy(() -> builder.redisTimeout(Duration.ofSeconds(61)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("redisTimeout must be between 100 ms and 60000 ms, but was 61000 ms");
    }

    private void assertWithin(String what, long startNanos, long endNanos, Duration bound) {
        Duration late = noise.during(startNanos, endNanos);
        assertThat(Duration.ofNanos(endNanos - startNanos))
                .as("%s took %d ms (bound %d ms); a 10 ms JDK timer ran up to %d ms late meanwhile", what,
                        millis(endNanos - startNanos), bound.toMillis(), late.toMillis())
                .isLessThanOrEqualTo(bound.plus(late));
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** An asynchronous acquisition, and the moment it ended. */
    private static final class Stamped {

        private final CompletableFuture<Long> ended = new CompletableFuture<>();
        private volatile Throwable error;

        Stamped(CompletableFuture<Permit> acquisition) {
            acquisition.whenComplete((permit, failure) -> {
                error = failure;
                if (permit != null) {
                    permit.release();
                }
                ended.complete(System.nanoTime());
            });
        }

        long ended(Duration within) throws Exception {
            return ended.get(within.toMillis(), TimeUnit.MILLISECONDS);
        }

        long at() {
            return ended.join();
        }

        Throwable error() {
            return error;
        }
    }

    /** Counts the releases that returned before Redis confirmed them. */
    private static final class DeferredReleases implements SemaphoreListener {

        private final AtomicInteger count = new AtomicInteger();

        @Override
        public void releaseDeferred(String semaphore) {
            count.incrementAndGet();
        }

        int count() {
            return count.get();
        }
    }
}
