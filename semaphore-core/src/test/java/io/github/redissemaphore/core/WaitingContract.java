package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Waiting: strict arrival order, no overtaking, direct hand-off. Runs on a standalone Redis and
 * on a 3-master cluster.
 */
abstract class WaitingContract extends SemaphoreTestBase {

    protected WaitingContract(RedisTarget target) {
        super(target);
    }

    private static final Duration LONG_WAIT = Duration.ofSeconds(30);

    @Test
    void waitersAreServedInExactlyTheirArrivalOrder() throws Exception {
        List<RedisSemaphore> jvms = List.of(newRegistry().semaphore(name), newRegistry().semaphore(name));
        Permit held = jvms.get(0).tryAcquire().orElseThrow();
        List<Integer> served = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> done = new java.util.ArrayList<>();

        for (int i = 0; i < 20; i++) {
            int arrival = i;
            // Alternate JVMs; each waiter is in the queue before the next one arrives.
            CompletableFuture<Permit> waiter = jvms.get(i % 2).acquireAsync(1, LONG_WAIT);
            int queued = i + 1;
            await().atMost(Duration.ofSeconds(5)).until(() -> jvms.get(0).state().waiters().size() == queued);
            done.add(waiter.thenAccept(permit -> {
                served.add(arrival);
                permit.release();
            }));
        }
        held.release();

        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        assertThat(served).containsExactlyElementsOf(java.util.stream.IntStream.range(0, 20).boxed().toList());
        assertThat(jvms.get(0).state().waiters()).isEmpty();
        assertEveryKeyExpires();
    }

    @Test
    void fairModeLetsNobodyOvertakeALargerRequest() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3));
        Permit first = semaphore.tryAcquire().orElseThrow();
        Permit second = semaphore.tryAcquire().orElseThrow();

        CompletableFuture<Permit> wantsTwo = semaphore.acquireAsync(2, LONG_WAIT);
        await().until(() -> semaphore.state().waiters().size() == 1);
        CompletableFuture<Permit> wantsOne = semaphore.acquireAsync(1, LONG_WAIT);
        await().until(() -> semaphore.state().waiters().size() == 2);

        // One permit is free, but the waiter for two is ahead: the waiter for one is not served.
        assertThat(semaphore.tryAcquire()).as("tryAcquire while others wait, fair").isEmpty();
        assertThat(wantsOne).isNotDone();
        assertThat(semaphore.state().waiters()).extracting(SemaphoreState.Waiter::count).containsExactly(2, 1);

        first.release();
        Permit two = wantsTwo.get(10, TimeUnit.SECONDS);
        assertThat(wantsOne).isNotDone();
        second.release();
        Permit one = wantsOne.get(10, TimeUnit.SECONDS);
        assertThat(one.fencingToken()).isGreaterThan(two.fencingToken());
        two.release();
        one.release();
    }

    @Test
    void unfairModeTakesFreePermitsDespiteTheQueue() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name,
                SemaphoreSettings.DEFAULTS.withPermits(3).withFair(false));
        Permit first = semaphore.tryAcquire().orElseThrow();
        Permit second = semaphore.tryAcquire().orElseThrow();
        CompletableFuture<Permit> wantsTwo = semaphore.acquireAsync(2, LONG_WAIT);
        await().until(() -> semaphore.state().waiters().size() == 1);

        Permit barging = semaphore.tryAcquire(1, Duration.ofSeconds(5)).orElseThrow();
        assertThat(wantsTwo).isNotDone();

        List.of(first, second, barging).forEach(Permit::release);
        wantsTwo.get(10, TimeUnit.SECONDS).release();
    }

    @Test
    void aReleaseHandsThePermitStraightToTheHeadWaiter() throws Exception {
        RedisSemaphore holderJvm = newRegistry().semaphore(name);
        RedisSemaphore waiterJvm = newRegistry().semaphore(name);
        Permit held = holderJvm.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, LONG_WAIT);
        await().until(() -> holderJvm.state().waiters().size() == 1);

        held.release();
        Permit handedOver = waiter.get(10, TimeUnit.SECONDS);
        assertThat(handedOver.isHeld()).isTrue();
        assertThat(holderJvm.state().holders()).singleElement()
                .satisfies(holder -> assertThat(holder.permitId()).isEqualTo(handedOver.id()));
        handedOver.release();
    }

    @Test
    void anExpiredLeaseGoesToTheHeadWaiterWithoutARelease() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withLeaseTime(Duration.ofMillis(500)).withAutoRenew(false);
        RedisSemaphore crashedJvm = newRegistry().semaphore(name, settings);
        RedisSemaphore waiterJvm = newRegistry().semaphore(name, settings);
        Permit abandoned = crashedJvm.tryAcquire().orElseThrow();

        CompletableFuture<Permit> waiter = waiterJvm.acquireAsync(1, LONG_WAIT);
        // Nobody releases: the waiter's own tick finds the lease expired and takes it over.
        Permit next = waiter.get(5, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(abandoned.fencingToken());
        assertThat(abandoned.isHeld()).isFalse();
        next.release();
    }
}
