package io.github.redissemaphore.core;

import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.TcpProxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The degraded mode's state machine walked at random: one instance of a {@code when-unavailable:
 * local} semaphore (4 permits, a share of 2) whose network to Redis is cut and healed at random
 * moments while its callers take permits now or with waits and give them back whole or in part.
 * After every step:
 * <ul>
 * <li>never more than the permits held, and, once the instance decides alone and no permit Redis
 *     granted it is held any more, never more than its share;</li>
 * <li>a permit granted while degraded says it is local and carries token 0; one Redis granted, a
 *     token above 0;</li>
 * <li>every wait ends (a permit or a refusal) by its wait plus the Redis timeout, plus slack.</li>
 * </ul>
 * At every heal that ends in a recovery, Redis comes to hold exactly the permits still held, and at
 * the end, once all are released, nothing is left in Redis or in the instance. Replay:
 * {@code -Ddegraded.walk.seed=...}.
 */
@RedisTest
class DegradedWalkTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final int PERMITS = 4;
    private static final int SHARE = 2;

    /** A call in flight: its future, and when it must have ended. */
    private record Pending(CompletableFuture<Permit> future, long endsByNanos, String what) {
    }

    @Test
    void randomCutsHealsAcquiresAndReleasesKeepTheLimitsAndLeaveNothing(@Dedicated RedisServer server)
            throws Exception {
        long seed = Long.getLong("degraded.walk.seed", System.nanoTime());
        Random random = new Random(seed);
        SemaphoreSettings settings = new SemaphoreSettings(PERMITS, Duration.ofSeconds(5), Duration.ZERO, true, true)
                .withWhenUnavailable(WhenUnavailable.LOCAL, SHARE);
        try (TcpProxy proxy = TcpProxy.to(server);
             SemaphoreRegistry registry = SemaphoreRegistry.builder(proxy.connectionFactory(TIMEOUT))
                     .redisTimeout(TIMEOUT).waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2))
                     .build();
             SemaphoreRegistry observer = SemaphoreRegistry.builder(server.connectionFactory()).build()) {
            RedisSemaphore semaphore = registry.semaphore("walk", settings);
            RedisSemaphore outside = observer.semaphore("walk", settings);
            List<Permit> held = new ArrayList<>();
            List<Pending> pending = new ArrayList<>();
            boolean cut = false;
            for (int step = 0; step < 250; step++) {
                String where = "seed " + seed + " step " + step;
                int op = random.nextInt(10);
                if (op < 3) {
                    try {
                        semaphore.tryAcquire(1 + random.nextInt(2), Duration.ZERO).ifPresent(held::add);
                    } catch (SemaphoreUnavailableException e) {
                        // A call Redis did not answer in time, while others were: no outage, and the caller hears it.
                    }
                } else if (op < 5) {
                    Duration wait = Duration.ofMillis(random.nextInt(400));
                    long by = System.nanoTime() + wait.plus(TIMEOUT).plus(TIMEOUT).plusSeconds(2).toNanos();
                    pending.add(new Pending(semaphore.acquireAsync(1, wait), by, where));
                } else if (op < 7 && !held.isEmpty()) {
                    Permit permit = held.remove(random.nextInt(held.size()));
                    if (permit.isHeld() && permit.count() == 2 && random.nextBoolean()) {
                        permit.release(1);
                        held.add(permit);
                    } else {
                        permit.release();
                    }
                } else if (op == 7) {
                    if (cut) {
                        proxy.heal();
                    } else {
                        proxy.partition();
                    }
                    cut = !cut;
                } else {
                    Thread.sleep(20 + random.nextInt(200));
                }
                for (Pending call : List.copyOf(pending)) {
                    if (call.future().isDone()) {
                        pending.remove(call);
                        if (!call.future().isCompletedExceptionally()) {
                            held.add(call.future().join());
                        }
                    } else {
                        assertThat(System.nanoTime()).as(where + ": " + call.what() + " still waits")
                                .isLessThan(call.endsByNanos());
                    }
                }
                held.removeIf(permit -> !permit.isHeld());
                int inside = held.stream().mapToInt(Permit::count).sum();
                assertThat(inside).as(where + ": held " + held).isLessThanOrEqualTo(PERMITS);
                boolean redisGrantedHeld = held.stream().anyMatch(permit -> !permit.isLocal());
                if (semaphore.localState().degraded() != null && !redisGrantedHeld) {
                    assertThat(inside).as(where + ": held while degraded " + held).isLessThanOrEqualTo(SHARE);
                }
                for (Permit permit : held) {
                    assertThat(permit.fencingToken() == 0).as(where + ": " + permit).isEqualTo(permit.isLocal());
                }
            }
            proxy.heal();
            for (Pending call : pending) {
                call.future().handle((permit, error) -> permit).get();
            }
            pending.forEach(call -> {
                if (!call.future().isCompletedExceptionally()) {
                    held.add(call.future().join());
                }
            });
            held.removeIf(permit -> !permit.isHeld());
            int stillHeld = held.stream().mapToInt(Permit::count).sum();
            await("seed " + seed + ": recovered, Redis holds what is held").atMost(Duration.ofSeconds(20))
                    .ignoreExceptions().until(() -> semaphore.localState().degraded() == null
                            && outside.state().used() == stillHeld);
            held.forEach(Permit::release);
            await("seed " + seed + ": nothing left").atMost(Duration.ofSeconds(10)).until(() -> {
                SemaphoreState state = outside.state();
                return state.used() == 0 && state.holders().isEmpty() && state.waiters().isEmpty()
                        && semaphore.localState().permitsHeld() == 0;
            });
        }
    }
}
