package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.StarterContexts;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis outage never hangs a request, with Spring Boot's defaults: {@code spring.data.redis.timeout}
 * left unset (Lettuce's 60 s), the library's own {@code redis-timeout}, waiter tick and heartbeat at
 * theirs (2 s, 1 s, 5 s). Two instances share the Redis; mid-burst, Redis goes away: the calls
 * that held permits (a blocking, a CompletionStage and a Mono method) return within 1 s of their
 * work ending, the queued ones and new ones fail with {@link SemaphoreUnavailableException}
 * within the Redis timeout; once Redis answers again
 * guarded calls succeed within 2 s. Every figure is printed; each bound is widened by how late a
 * 10 ms JDK timer ran meanwhile ({@link SchedulingNoise}).
 */
@Tag("slow")
@RedisTest
class RedisOutageApplicationTest {

    private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration SLACK = Duration.ofMillis(300);
    private static final Duration RETURN_BOUND = Duration.ofSeconds(1);
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(2);
    /** Long enough for Lettuce's reconnect backoff to grow to seconds. */
    private static final Duration OUTAGE = Duration.ofSeconds(6);
    private static final int QUEUED = 7;

    private final ExecutorService callers = Executors.newCachedThreadPool();
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stop() {
        callers.shutdownNow();
        noise.close();
    }

    /** Boot's and the library's defaults but the semaphore's own settings, on {@code url}. */
    private static ApplicationContextRunner instance(RedisServer server, String url) {
        return StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(BootLine.METRICS_AUTO_CONFIGURATION))
                .withBean(SimpleMeterRegistry.class)
                .withBean(BurstService.class)
                .withPropertyValues("spring.data.redis.url=" + url,
                        "distributed-semaphore.waiter-tick=1s", "distributed-semaphore.waiter-heartbeat=5s",
                        "distributed-semaphore.semaphores.burst.permits=3",
                        "distributed-semaphore.semaphores.burst.wait-time=30s");
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void anOutageMidBurstReturnsHoldersAtOnceFailsTheRestWithinTheTimeoutAndARestartServesWithin2s(
            @Dedicated RedisServer server) {
        ApplicationContextRunner instance = instance(server, server.uri());
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            List<Call> holders = holdAllThree(first, second, gate);
            List<Call> queued = queue(first, second, first);

            server.kill();
            long down = System.nanoTime();
            gate.open();
            long workEnded = System.nanoTime();
            Call newCall = call("a new call", () -> first.getBean(BurstService.class).blocking(null));
            for (Call holder : holders) {
                assertThat(holder.outcome()).as(holder.name).isEqualTo("done");
                assertWithin(holder.name + " returning after its work ended", workEnded, holder.at(), RETURN_BOUND);
            }
            assertFailedWithin(newCall, newCall.start, REDIS_TIMEOUT.plus(SLACK));
            for (Call waiter : queued) {
                assertFailedWithin(waiter, down, REDIS_TIMEOUT.plus(SLACK));
            }
            assertThat(deferred(first) + deferred(second)).as("semaphore.release.deferred, both instances")
                    .isEqualTo(3);

            await().during(OUTAGE.minus(Duration.ofNanos(System.nanoTime() - down))).atMost(OUTAGE.plusSeconds(5))
                    .until(() -> !server.isRunning());
            server.start();
            long up = System.nanoTime();
            long firstServed = firstSuccess(first);
            long secondServed = firstSuccess(second);
            System.out.printf("Redis killed mid-burst, Boot's default spring.data.redis.timeout (60 s),"
                            + " redis-timeout 2s: the 3 holders returned %s ms after their work ended; a new call"
                            + " failed after %d ms; %d queued calls failed %s ms after the kill; after %d s down,"
                            + " the first guarded calls succeeded %d ms (first instance) and %d ms (second) after"
                            + " Redis answered again%n",
                    holders.stream().map(holder -> millis(holder.at() - workEnded)).toList(),
                    millis(newCall.at() - newCall.start), QUEUED,
                    queued.stream().map(waiter -> millis(waiter.at() - down)).toList(), OUTAGE.toSeconds(),
                    millis(firstServed - up), millis(secondServed - up));
            assertWithin("the first guarded call of the first instance after the restart", up, firstServed,
                    RECOVERY_BOUND);
            assertWithin("the first guarded call of the second instance after the restart", up, secondServed,
                    RECOVERY_BOUND);
        }));
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aPartitionOfOneInstanceMidBurstAndItsHealingLikewise(@Dedicated RedisServer server) {
        try (TcpProxy proxy = TcpProxy.to(server)) {
            ApplicationContextRunner cutOffInstance = instance(server, "redis://" + proxy.host() + ":" + proxy.port());
            ApplicationContextRunner otherInstance = instance(server, server.uri());
            cutOffInstance.run(cutOff -> otherInstance.run(other -> {
                Gate gate = new Gate();
                List<Call> holders = holdAllThree(cutOff, cutOff, gate);
                List<Call> queued = queue(cutOff, cutOff, other);

                proxy.partition();
                long cut = System.nanoTime();
                gate.open();
                long workEnded = System.nanoTime();
                for (Call holder : holders) {
                    assertThat(holder.outcome()).as(holder.name).isEqualTo("done");
                    assertWithin(holder.name + " returning after its work ended", workEnded, holder.at(),
                            RETURN_BOUND);
                }
                for (Call waiter : queued) {
                    assertFailedWithin(waiter, cut, REDIS_TIMEOUT.plus(SLACK));
                }
                SemaphoreState during = state(other);
                assertThat(during.holders()).as("holders in Redis during the partition").hasSize(3);

                proxy.heal();
                long healed = System.nanoTime();
                await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> {
                    SemaphoreState now = state(other);
                    return now.holders().isEmpty() && now.waiters().isEmpty();
                });
                long cleared = System.nanoTime();
                long served = firstSuccess(cutOff);
                System.out.printf("one instance cut off mid-burst: the 3 holders returned %s ms after their work"
                                + " ended; %d queued calls failed %s ms after the partition; after it healed, what"
                                + " ended during it was gone from Redis in %d ms, and the instance's first guarded call"
                                + " succeeded %d ms after%n",
                        holders.stream().map(holder -> millis(holder.at() - workEnded)).toList(), QUEUED,
                        queued.stream().map(waiter -> millis(waiter.at() - cut)).toList(), millis(cleared - healed),
                        millis(served - healed));
                assertWithin("what ended during the partition gone from Redis", healed, cleared, Duration.ofSeconds(1));
                assertWithin("the first guarded call after the partition healed", healed, served, RECOVERY_BOUND);
            }));
        }
    }

    /**
     * Three calls inside the guarded methods, one per kind of result: blocking on {@code one},
     * CompletionStage and Mono on {@code other}.
     */
    private List<Call> holdAllThree(ApplicationContext one, ApplicationContext other, Gate gate) {
        List<Call> holders = new ArrayList<>();
        holders.add(call("blocking holder", () -> one.getBean(BurstService.class).blocking(gate)));
        gate.awaitEntered(1);
        CompletableFuture<String> stage = other.getBean(BurstService.class).stage(gate);
        holders.add(new Call("CompletionStage holder", stage.thenApply(Object::toString)));
        gate.awaitEntered(2);
        CompletableFuture<String> mono = other.getBean(BurstService.class).mono(gate).toFuture();
        holders.add(new Call("Mono holder", mono.thenApply(Object::toString)));
        gate.awaitEntered(3);
        return holders;
    }

    /** {@link #QUEUED} blocking calls, spread over both instances, waiting for a permit (as {@code observer} sees). */
    private List<Call> queue(ApplicationContext one, ApplicationContext other, ApplicationContext observer) {
        List<Call> queued = new ArrayList<>();
        for (int i = 0; i < QUEUED; i++) {
            ApplicationContext context = i % 2 == 0 ? one : other;
            queued.add(call("queued call " + i, () -> context.getBean(BurstService.class).blocking(null)));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> state(observer).waiters().size() == QUEUED);
        return queued;
    }

    private Call call(String name, Supplier<String> body) {
        return new Call(name, CompletableFuture.supplyAsync(body, callers));
    }

    private void assertFailedWithin(Call call, long since, Duration bound) {
        assertThat(call.outcome()).as(call.name).isEqualTo(SemaphoreUnavailableException.class.getSimpleName());
        assertWithin(call.name + " failing", since, call.at(), bound);
    }

    /** @return when a guarded call of {@code context} first succeeded, tried every 10 ms */
    private static long firstSuccess(ApplicationContext context) {
        BurstService service = context.getBean(BurstService.class);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).ignoreExceptions()
                .until(() -> "done".equals(service.blocking(null)));
        return System.nanoTime();
    }

    private static SemaphoreState state(ApplicationContext context) {
        return context.getBean(SemaphoreRegistry.class).semaphore("burst").state();
    }

    private static double deferred(ApplicationContext context) {
        return context.getBean(MeterRegistry.class).get("semaphore.release.deferred").tag("name", "burst").counter()
                .count();
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

    /** A guarded call under way: its outcome ("done" or the exception's simple name) and when it came. */
    private static final class Call {

        private final String name;
        private final long start = System.nanoTime();
        private final CompletableFuture<String> outcome = new CompletableFuture<>();
        private volatile long at;

        Call(String name, CompletableFuture<String> result) {
            this.name = name;
            result.whenComplete((value, error) -> {
                at = System.nanoTime();
                Throwable cause = error;
                while (cause != null && cause.getCause() != null
                        && !(cause instanceof SemaphoreUnavailableException)) {
                    cause = cause.getCause();
                }
                outcome.complete(error == null ? value : cause.getClass().getSimpleName());
            });
        }

        String outcome() {
            return Objects.requireNonNull(outcome.orTimeout(30, TimeUnit.SECONDS).join());
        }

        long at() {
            outcome();
            return at;
        }
    }

    static class BurstService {

        private final ExecutorService async = Executors.newCachedThreadPool();

        @DistributedSemaphore("burst")
        public String blocking(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }

        @DistributedSemaphore("burst")
        public CompletableFuture<String> stage(Gate gate) {
            return CompletableFuture.supplyAsync(() -> blocking(gate), async);
        }

        @DistributedSemaphore("burst")
        public Mono<String> mono(Gate gate) {
            return Mono.fromCallable(() -> blocking(gate)).subscribeOn(Schedulers.boundedElastic());
        }
    }
}
