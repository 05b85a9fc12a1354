package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

/**
 * Permits that move between processes: adopt and release by id across registries (each on its
 * own connection factory: two "JVMs"), a lease per acquisition, extend, partial release, and the
 * argument checks of each. Runs on a standalone Redis and on a 3-master cluster.
 */
abstract class PermitMovesContract extends SemaphoreTestBase {

    /** Long enough for a renewal on a loaded machine, short enough that a lapse shows within seconds. */
    /**
     * Short, so that the tests see leases outlive it, yet 3 s: renewed every second, a lease of a
     * loaded machine's JVM whose renewal comes back a second late is not lost (1.5 s was, once).
     */
    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final SemaphoreSettings THREE = SemaphoreSettings.DEFAULTS.withPermits(3).withLeaseTime(LEASE);

    protected PermitMovesContract(RedisTarget target) {
        super(target);
    }

    @Test
    void aPermitTakenInOneJvmIsAdoptedRenewedAndReleasedByAnother() throws InterruptedException {
        AtomicInteger leasesLost = new AtomicInteger();
        SemaphoreRegistry webJvm = newRegistry(builder -> builder.listener(countingLostLeases(leasesLost)));
        RedisSemaphore web = webJvm.semaphore(name, THREE);
        RedisSemaphore worker = newRegistry().semaphore(name, THREE);
        Permit taken = web.tryAcquire(2, Duration.ZERO).orElseThrow();
        AtomicInteger lost = new AtomicInteger();
        taken.onLost(permit -> lost.incrementAndGet());

        Permit adopted = worker.adopt(taken.id()).orElseThrow();

        assertThat(adopted.id()).isEqualTo(taken.id());
        assertThat(adopted.count()).isEqualTo(2);
        assertThat(adopted.fencingToken()).isEqualTo(taken.fencingToken());
        assertThat(adopted.isHeld()).isTrue();
        assertThat(adopted.leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
        // The former holder learns at its next renewal that the lease left it.
        await().atMost(Duration.ofSeconds(15)).until(() -> lost.get() == 1);
        assertThat(taken.isHeld()).isFalse();
        assertThat(taken.leaseRemaining()).isZero();
        assertThat(leasesLost).as("a hand-over is no lost lease").hasValue(0);
        // Its release, and its registry's shutdown, leave the adopted lease alone...
        taken.release();
        webJvm.close();
        // ...which the adopting JVM keeps renewing, well past its lease time.
        await().during(LEASE.multipliedBy(2)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> adopted.isHeld() && worker.state().used() == 2);
        assertThat(worker.state().holders()).singleElement().satisfies(holder -> {
            assertThat(holder.permitId()).isEqualTo(taken.id());
            assertThat(holder.fencingToken()).isEqualTo(taken.fencingToken());
        });
        assertThat(lost).hasValue(1);

        adopted.release();
        assertThat(worker.state().used()).isZero();
        assertThat(worker.adopt(taken.id())).isEmpty();
    }

    @Test
    void adoptingALeaseThisJvmHoldsReturnsThatPermit() {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);
        Permit permit = semaphore.tryAcquire().orElseThrow();

        assertThat(semaphore.adopt(permit.id())).containsSame(permit);
        assertThat(semaphore.adopt(permit.id())).containsSame(permit);
        assertThat(semaphore.state().used()).isEqualTo(1);
        permit.release();
        assertThat(semaphore.state().used()).isZero();
    }

    @Test
    void onlyALiveHolderCanBeAdopted() throws Exception {
        RedisSemaphore holderJvm = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE));
        RedisSemaphore other = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withLeaseTime(LEASE));
        Permit held = holderJvm.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiting = holderJvm.acquireAsync(1, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(15)).until(() -> other.state().waiters().size() == 1);
        String waiterId = other.state().waiters().get(0).waiterId();

        assertThat(other.adopt(waiterId)).as("a waiter holds nothing yet").isEmpty();
        assertThat(other.adopt("never-issued-" + name)).isEmpty();
        held.release();
        assertThat(other.adopt(held.id())).as("a released lease").isEmpty();
        Permit granted = waiting.get(10, TimeUnit.SECONDS);
        granted.release();
        assertThat(other.state().used()).isZero();
    }

    @Test
    void releaseByIdFreesAnyLeaseFromAnywhere() throws Exception {
        AtomicInteger leasesLost = new AtomicInteger();
        // The holder's JVM hears of the hand-over on its inbox; a renewal of its lease between the
        // release and that message would find the lease gone first and call it lost (a loaded
        // machine once let one in, with 3 s leases and the 1 s tick of a JVM that has a waiter). So
        // none is due meanwhile: 30 s leases, renewed every 10 s, and a 10 s tick in that JVM.
        SemaphoreSettings three = THREE.withLeaseTime(Duration.ofSeconds(30));
        RedisSemaphore holderJvm = newRegistry(builder -> builder.listener(countingLostLeases(leasesLost))
                .waiterTick(Duration.ofSeconds(10)).waiterHeartbeat(Duration.ofSeconds(30)))
                .semaphore(name, three);
        RedisSemaphore other = newRegistry().semaphore(name, three);
        Permit elsewhere = holderJvm.tryAcquire(2, Duration.ZERO).orElseThrow();
        AtomicInteger lost = new AtomicInteger();
        elsewhere.onLost(permit -> lost.incrementAndGet());
        Permit own = other.tryAcquire().orElseThrow();
        // The holder's JVM waits too, so it listens on its inbox on a cluster as well.
        CompletableFuture<Permit> waiting = holderJvm.acquireAsync(2, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(15)).until(() -> other.state().waiters().size() == 1);

        assertThat(other.release(elsewhere.id())).isTrue();
        assertThat(other.release(elsewhere.id())).isFalse();
        // The freed permits went to the waiter; the holder heard of the hand-over on its inbox.
        Permit served = waiting.get(10, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(15)).until(() -> lost.get() == 1);
        assertThat(elsewhere.isHeld()).isFalse();
        assertThat(leasesLost).as("released by id: a hand-over, no lost lease").hasValue(0);

        // A permit of this JVM released by its id is simply released: not lost.
        AtomicInteger ownLost = new AtomicInteger();
        own.onLost(permit -> ownLost.incrementAndGet());
        assertThat(other.release(own.id())).isTrue();
        assertThat(own.isHeld()).isFalse();
        assertThat(other.release("never-issued-" + name)).isFalse();
        assertThat(other.state().holders()).extracting(SemaphoreState.Holder::permitId).containsExactly(served.id());
        served.release();
        assertThat(ownLost).hasValue(0);
    }

    @Test
    void aLeasePerAcquisitionIsRecordedAndRenewedByItsOwnLength() throws Exception {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE.withLeaseTime(Duration.ofSeconds(30)));
        Duration shortLease = Duration.ofMillis(1200);

        Permit brief = semaphore.tryAcquire(1, Duration.ZERO, shortLease).orElseThrow();
        Permit async = semaphore.acquireAsync(1, Duration.ZERO, Duration.ofHours(2)).get(10, TimeUnit.SECONDS);
        Permit usual = semaphore.tryAcquire().orElseThrow();

        assertThat(brief.leaseRemaining()).isPositive().isLessThanOrEqualTo(shortLease);
        assertThat(async.leaseRemaining()).isGreaterThan(Duration.ofMinutes(119));
        assertThat(leaseLeft(semaphore, usual)).isBetween(Duration.ofSeconds(25), Duration.ofSeconds(30));
        assertThat(leaseLeft(semaphore, async)).isBetween(Duration.ofMinutes(119), Duration.ofHours(2));
        // Renewed by its own 1.2 s, not the semaphore's 30 s, and held well past it.
        await().during(shortLease.multipliedBy(2)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> brief.isHeld() && leaseLeft(semaphore, brief).compareTo(shortLease) <= 0);
        brief.release();
        async.release();
        usual.release();
    }

    @Test
    void aLeasePerAcquisitionWithoutRenewalRunsOut() throws InterruptedException {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE.withAutoRenew(false)
                .withLeaseTime(Duration.ofSeconds(30)));

        Permit brief = semaphore.tryAcquire(3, Duration.ZERO, Duration.ofMillis(300)).orElseThrow();

        await().atMost(Duration.ofSeconds(15)).until(() -> semaphore.state().used() == 0);
        assertThat(brief.isHeld()).isFalse();
        assertThat(semaphore.tryAcquire(3, Duration.ZERO)).isPresent();
    }

    @Test
    void extendMakesTheLeaseEndThatLongFromNowAndRenewalGoesOnByIt() {
        RedisSemaphore fixed = newRegistry().semaphore(name, THREE.withAutoRenew(false));
        Permit permit = fixed.tryAcquire().orElseThrow();

        permit.extend(Duration.ofSeconds(20));

        assertThat(permit.leaseRemaining()).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(20));
        assertThat(leaseLeft(fixed, permit)).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(20));
        // Still held after its original lease, with no renewal at all.
        await().during(LEASE.plusMillis(500)).atMost(Duration.ofSeconds(10)).until(permit::isHeld);
        assertThat(fixed.state().used()).isEqualTo(1);
        // Shorter is allowed: the lease then ends sooner.
        permit.extend(Duration.ofMillis(300));
        await().atMost(Duration.ofSeconds(15)).until(() -> fixed.state().used() == 0);
        assertThatIllegalStateException().isThrownBy(() -> permit.extend(Duration.ofSeconds(5)))
                .withMessageContaining("is no longer held");
        assertThat(permit.isHeld()).isFalse();

        // With renewal, the new length is what every renewal extends by.
        RedisSemaphore renewed = newRegistry().semaphore(name, THREE.withLeaseTime(Duration.ofSeconds(30)));
        Permit kept = renewed.tryAcquire().orElseThrow();
        kept.extend(Duration.ofMillis(900));
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> kept.isHeld() && leaseLeft(renewed, kept).compareTo(Duration.ofMillis(900)) <= 0);
        kept.release();
    }

    @Test
    void extendingOrShrinkingALeaseAnotherJvmAdoptedFailsAndReportsItGone() throws InterruptedException {
        RedisSemaphore web = newRegistry().semaphore(name, THREE);
        RedisSemaphore worker = newRegistry().semaphore(name, THREE);
        Permit taken = web.tryAcquire(3, Duration.ZERO).orElseThrow();
        AtomicInteger lost = new AtomicInteger();
        taken.onLost(permit -> lost.incrementAndGet());
        Permit adopted = worker.adopt(taken.id()).orElseThrow();

        assertThatIllegalStateException().isThrownBy(() -> taken.extend(Duration.ofSeconds(5)))
                .withMessageContaining("adopted by another process");
        // Once: by the extend that found it gone, or by the inbox's message of the adoption, whose
        // thread may still be calling the listeners when the extend throws.
        await().atMost(Duration.ofSeconds(15)).untilAtomic(lost, equalTo(1));
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).untilAtomic(lost,
                equalTo(1));
        assertThatIllegalStateException().isThrownBy(() -> taken.release(1));
        assertThat(worker.state().holders()).singleElement().satisfies(holder -> {
            assertThat(holder.count()).isEqualTo(3);
            assertThat(holder.leaseRemaining()).isLessThanOrEqualTo(LEASE);
        });
        adopted.release();
    }

    @Test
    void aPartGivenBackKeepsIdAndTokenAndServesTheQueue() throws Exception {
        RedisSemaphore holderJvm = newRegistry().semaphore(name, THREE);
        RedisSemaphore other = newRegistry().semaphore(name, THREE);
        Permit three = holderJvm.tryAcquire(3, Duration.ZERO).orElseThrow();
        CompletableFuture<Permit> waiting = other.acquireAsync(1, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(15)).until(() -> other.state().waiters().size() == 1);

        three.release(1);

        Permit served = waiting.get(10, TimeUnit.SECONDS);
        assertThat(three.count()).isEqualTo(2);
        assertThat(three.isHeld()).isTrue();
        SemaphoreState state = other.state();
        assertThat(state.used()).isEqualTo(3);
        assertThat(state.holders()).anySatisfy(holder -> {
            assertThat(holder.permitId()).isEqualTo(three.id());
            assertThat(holder.count()).isEqualTo(2);
            assertThat(holder.fencingToken()).isEqualTo(three.fencingToken());
        });
        assertThat(served.fencingToken()).isGreaterThan(three.fencingToken());
        // The rest stays held and renewed.
        await().during(LEASE.multipliedBy(2)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
                .until(() -> three.isHeld() && other.state().used() == 3);

        assertThatIllegalArgumentException().isThrownBy(() -> three.release(3))
                .withMessage("permits must be between 1 and 2 (the permits this lease holds), but was 3");
        assertThatIllegalArgumentException().isThrownBy(() -> three.release(0))
                .withMessage("permits must be between 1 and 2 (the permits this lease holds), but was 0");
        three.release(2);
        assertThat(three.isHeld()).isFalse();
        assertThat(other.state().used()).isEqualTo(1);
        served.release();
    }

    @Test
    void badArgumentsAreRefusedNamingTheArgument() {
        RedisSemaphore semaphore = newRegistry().semaphore(name, THREE);
        String range = "leaseTime must be between 100 ms and 24 h (86400000 ms), but was ";

        assertThatIllegalArgumentException()
                .isThrownBy(() -> semaphore.tryAcquire(1, Duration.ZERO, Duration.ofMillis(99)))
                .withMessage(range + "99 ms");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> semaphore.acquireAsync(1, Duration.ZERO, Duration.ofHours(25)))
                .withMessage(range + "90000000 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> semaphore.acquireAsync(1, Duration.ZERO, null))
                .withMessage("leaseTime must not be null");
        for (String bad : new String[] {null, "", "with space", "x".repeat(201)}) {
            assertThatIllegalArgumentException().isThrownBy(() -> semaphore.adopt(bad))
                    .withMessageStartingWith("permitId must be");
            assertThatIllegalArgumentException().isThrownBy(() -> semaphore.release(bad))
                    .withMessageStartingWith("permitId must be");
        }
        Permit permit = semaphore.tryAcquire().orElseThrow();
        assertThatIllegalArgumentException().isThrownBy(() -> permit.extend(Duration.ofMillis(50)))
                .withMessage(range + "50 ms");
        permit.release();
        assertThatIllegalStateException().isThrownBy(() -> permit.extend(Duration.ofSeconds(1)))
                .withMessageContaining("is no longer held");
        assertThat(semaphore.state().used()).isZero();
    }

    private static SemaphoreListener countingLostLeases(AtomicInteger leasesLost) {
        return new SemaphoreListener() {
            @Override
            public void leaseLost(Permit permit) {
                leasesLost.incrementAndGet();
            }
        };
    }

    /** @return the lease left of the permit, as Redis has it */
    private static Duration leaseLeft(RedisSemaphore semaphore, Permit permit) {
        Optional<SemaphoreState.Holder> holder = semaphore.state().holders().stream()
                .filter(h -> h.permitId().equals(permit.id())).findFirst();
        return holder.map(SemaphoreState.Holder::leaseRemaining).orElse(Duration.ZERO);
    }
}
