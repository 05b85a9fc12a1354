package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisSentinel;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A failover as an operator makes one, {@code SENTINEL FAILOVER}, under load: the replica is
 * promoted while the old master keeps running, and stays a master until the Sentinel demotes it
 * (about 10 s later), so both "JVMs" go on using it meanwhile, and what they give back there after
 * the promotion is lost. Two registries call a semaphore of 2 permits with 30 s leases from three
 * threads each. Measured and checked: how long the old master takes to step down, the longest
 * stretch without a grant, when the calls are served again after the step-down, and how soon the
 * leases the new master still holds for permits that were given back (stale leases) are gone; a
 * witness counts the callers inside at once. With {@code replicas} 0 and 1.
 */
@Tag("redis-compat")
@Tag("slow")
class SentinelManualFailoverTest {

    private static final int PERMITS = 2;
    private static final Duration LEASE = Duration.ofSeconds(30);
    /** Served again within this of the old master's step-down (plus the scheduler's lateness). */
    private static final Duration SERVED_AGAIN = Duration.ofSeconds(3);
    /**
     * With {@code replicas: 1}, within this of the step-down: the old master must first come back
     * as the new one's replica (a full sync, or at once by a partial one on Redis 6.2), and a
     * hand-off whose confirmation no replica could acknowledge meanwhile holds its permit for its
     * claim (the waiter heartbeat, 5 s), and the next such hand-off for one more. Measured: 4.5 s on
     * Redis 6.2 and 5.0-6.2 s on 7.0 most runs, 9.1 s once on 6.2 (the replica back 43 ms after the
     * step-down), over the 8 s this allowed before.
     */
    private static final Duration SERVED_AGAIN_REPLICATED = SERVED_AGAIN.plusSeconds(10);
    /**
     * How far behind the master the replica may be when SENTINEL FAILOVER is sent: replication is
     * asynchronous, so a grant the old master made just before the command may not have reached
     * the replica it promotes (guarantees.md, "Failover can break the limit"). On a loaded CI
     * machine (two busy cores) that lag exceeded the moment of the command: two overlaps of
     * holders granted just before it failed the check once.
     */
    private static final Duration REPLICATION_LAG = Duration.ofSeconds(1);

    @Test
    void aSentinelFailoverUnderLoadIsFollowedWithinSecondsOfTheOldMastersStepDown() throws Exception {
        run(0);
    }

    @Test
    void withReplicasOneGrantsWaitForTheOldMasterToComeBackAsAReplicaAndTheLimitHolds() throws Exception {
        run(1);
    }

    private void run(int replicas) throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(PERMITS).withLeaseTime(LEASE);
        if (replicas > 0) {
            settings = settings.withReplicas(replicas, Duration.ofMillis(500));
        }
        try (SchedulingNoise noise = new SchedulingNoise();
             RedisSentinel sentinel = RedisSentinel.start();
             SemaphoreRegistry jvmA = SemaphoreRegistry.builder(sentinel.connectionFactory(Duration.ofSeconds(1)))
                     .build();
             SemaphoreRegistry jvmB = SemaphoreRegistry.builder(sentinel.connectionFactory(Duration.ofSeconds(1)))
                     .build()) {
            List<RedisSemaphore> sides = List.of(jvmA.semaphore("failover", settings),
                    jvmB.semaphore("failover", settings));
            Load load = new Load();
            List<Thread> workers = new ArrayList<>();
            for (RedisSemaphore side : sides) {
                for (int i = 0; i < 3; i++) {
                    Thread worker = new Thread(() -> load.call(side), "caller-" + workers.size());
                    worker.start();
                    workers.add(worker);
                }
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> load.granted.get() > 50);
            // Let the replica see the leases of a while, so the promoted one holds some.
            Thread.sleep(500);
            int oldMaster = sentinel.master().port();
            long failoverAt = System.nanoTime();
            sentinel.failover();
            // ignoreExceptions: a server busy with the failover may be slow to answer a poll
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                    .until(() -> sentinel.currentMasterPort() != oldMaster);
            long promotedAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                    .until(() -> !RedisSentinel.isMaster(sentinel.master()));
            long steppedDownAt = System.nanoTime();
            long replicaBackAt = -1;

            // Stale leases: holders on the new master whose permit was given back more than 200 ms before.
            RedisSemaphore probe = sides.get(0);
            long staleGoneAt = -1;
            int staleSeen = 0;
            while (System.nanoTime() - steppedDownAt < LEASE.toNanos()) {
                long askedAt = System.nanoTime();
                try {
                    int stale = load.stale(probe, askedAt);
                    staleSeen = Math.max(staleSeen, stale);
                    if (stale == 0) {
                        staleGoneAt = askedAt;
                        break;
                    }
                } catch (RuntimeException e) {
                    // the new master is busy with the old one's sync: asked again
                }
                Thread.sleep(20);
            }
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                    .until(() -> sentinel.master().info("replication").contains("master_link_status:up"));
            replicaBackAt = System.nanoTime();
            Thread.sleep(replicas > 0 ? 10000 : 6000);
            load.stop.set(true);
            for (Thread worker : workers) {
                worker.join(TimeUnit.SECONDS.toMillis(30));
            }
            long endAt = System.nanoTime();
            Duration lateness = noise.during(failoverAt, endAt);

            long firstGrantAfterStepDown = load.firstGrantAfter(steppedDownAt);
            Duration stepDown = Duration.ofNanos(steppedDownAt - promotedAt);
            Duration longestGap = load.longestGap(failoverAt, endAt);
            Duration servedAfterStepDown = Duration.ofNanos(firstGrantAfterStepDown - steppedDownAt);
            Duration bound = replicas > 0 ? SERVED_AGAIN_REPLICATED : SERVED_AGAIN;
            Duration staleGone = staleGoneAt < 0 ? null : Duration.ofNanos(Math.max(0, staleGoneAt - steppedDownAt));
            System.out.printf("SentinelManualFailoverTest replicas=%d: promoted %d ms after SENTINEL FAILOVER; old"
                            + " master stepped down %d ms after the promotion; longest stretch without a grant %d ms;"
                            + " first grant %d ms after the step-down (the old master in sync as a replica %d ms after it); stale leases (at most %d seen after the step-down)"
                            + " gone %s ms after it; at most %d inside at once; %d granted, %d refused (no permit within"
                            + " the wait), %d unavailable; at most %d inside beyond the permits, all granted by the old"
                            + " master after SENTINEL FAILOVER; %s%n",
                    replicas, TimeUnit.NANOSECONDS.toMillis(promotedAt - failoverAt), stepDown.toMillis(),
                    longestGap.toMillis(), servedAfterStepDown.toMillis(),
                    TimeUnit.NANOSECONDS.toMillis(replicaBackAt - steppedDownAt), staleSeen,
                    staleGone == null ? "never" : String.valueOf(staleGone.toMillis()), load.maxInside.get(),
                    load.granted.get(), load.refused.get(), load.unavailable.get(),
                    Math.max(0, load.maxInside.get() - PERMITS), noise.stop());

            // The old master's grants the promoted replica never received (those after the promotion,
            // and those still in the replication stream when it came) are unknown to the new one: a
            // holder of one still inside may overlap the new master's grants (guarantees.md). So at
            // every moment: inside <= permits + holders granted between REPLICATION_LAG before
            // SENTINEL FAILOVER and the step-down that are still inside; and none of those holders is
            // inside once its work (30 ms) is done.
            assertThat(load.overLimit(PERMITS, failoverAt - REPLICATION_LAG.toNanos(), steppedDownAt))
                    .as("moments with more callers inside than the permits plus the old master's post-failover holders")
                    .isEmpty();
            assertThat(firstGrantAfterStepDown).as("a grant after the step-down").isPositive();
            assertThat(servedAfterStepDown).as("served again after the old master stepped down")
                    .isLessThanOrEqualTo(bound.plus(lateness));
            assertThat(longestGap).as("longest stretch without a grant")
                    .isLessThanOrEqualTo(Duration.ofNanos(steppedDownAt - failoverAt).plus(bound).plus(lateness));
            // Swept by the first renewal of each JVM on the new master, at once; bound: one renewal tick.
            assertThat(staleGone).as("stale leases gone after the step-down").isNotNull();
            assertThat(staleGone).isLessThanOrEqualTo(LEASE.dividedBy(3).plus(lateness));
            assertThat(load.failures).as("unexpected failures").isEmpty();
        }
    }

    /** The callers: each takes a permit (waiting up to 300 ms), works 30 ms, gives it back. */
    private static final class Load {

        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger maxInside = new AtomicInteger();
        final AtomicLong granted = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong unavailable = new AtomicLong();
        final Set<Long> grants = new ConcurrentSkipListSet<>();
        /** Each call's stay inside: {System.nanoTime() at the grant, at the end of its work}. */
        final List<long[]> stays = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Permit id -> System.nanoTime() it was given back. */
        final Map<String, Long> released = new ConcurrentHashMap<>();
        final List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());

        void call(RedisSemaphore semaphore) {
            while (!stop.get()) {
                try {
                    Optional<Permit> permit = semaphore.tryAcquire(1, Duration.ofMillis(300));
                    if (permit.isEmpty()) {
                        refused.incrementAndGet();
                        continue;
                    }
                    long at = System.nanoTime();
                    while (!grants.add(at)) {
                        at++;
                    }
                    granted.incrementAndGet();
                    int now = inside.incrementAndGet();
                    maxInside.accumulateAndGet(now, Math::max);
                    Thread.sleep(30);
                    inside.decrementAndGet();
                    stays.add(new long[] {at, System.nanoTime()});
                    permit.get().release();
                    released.put(permit.get().id(), System.nanoTime());
                } catch (SemaphoreUnavailableException e) {
                    unavailable.incrementAndGet();
                    sleepQuietly();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    failures.add(e);
                    sleepQuietly();
                }
            }
        }

        private static void sleepQuietly() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** @return how many holders {@code semaphore} shows whose permit was given back 200 ms before {@code at} */
        int stale(RedisSemaphore semaphore, long at) {
            int stale = 0;
            for (SemaphoreState.Holder holder : semaphore.state().holders()) {
                Long releasedAt = released.get(holder.permitId());
                if (releasedAt != null && at - releasedAt > TimeUnit.MILLISECONDS.toNanos(200)) {
                    stale++;
                }
            }
            return stale;
        }

        /**
         * @return the moments (System.nanoTime()) at which more callers were inside than
         *         {@code permits} plus those granted in [{@code from}, {@code to}] and still inside
         */
        List<Long> overLimit(int permits, long from, long to) {
            List<long[]> all;
            synchronized (stays) {
                all = new ArrayList<>(stays);
            }
            List<Long> over = new ArrayList<>();
            for (long[] stay : all) {
                long at = stay[0];
                int insideThen = 0;
                int windowHolders = 0;
                for (long[] other : all) {
                    if (other[0] <= at && at < other[1]) {
                        insideThen++;
                        if (other[0] >= from && other[0] <= to) {
                            windowHolders++;
                        }
                    }
                }
                if (insideThen > permits + windowHolders) {
                    over.add(at);
                }
            }
            return over;
        }

        long firstGrantAfter(long at) {
            Long first = ((ConcurrentSkipListSet<Long>) grants).ceiling(at);
            return first == null ? -1 : first;
        }

        Duration longestGap(long from, long to) {
            long previous = from;
            long longest = 0;
            for (long at : ((ConcurrentSkipListSet<Long>) grants).subSet(from, to)) {
                longest = Math.max(longest, at - previous);
                previous = at;
            }
            return Duration.ofNanos(Math.max(longest, to - previous));
        }
    }
}
