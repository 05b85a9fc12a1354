package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.micrometer.observation.Observation;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The one owner of one semaphore's mutable state in this JVM: the leases it holds, the callers it
 * has waiting, and its lifecycle. Every write of them is here; the other pieces change them only
 * through these methods, and read them as snapshots.
 *
 * <p>The lifecycle, under {@link #lifecycle} (a lock, not a monitor: shutdown waits under it, and a
 * virtual thread must never be pinned):
 *
 * <pre>
 *   LIVE --retireIfIdle(): nothing held, waiting or starting--> RETIRED
 *     |
 *     +--- close(): no start from now on; waits for the starting ones --> CLOSING
 * </pre>
 *
 * An acquisition, adoption or release by id {@link #enter(long) enters} before it can make this JVM
 * hold or wait, and {@link #started(long) leaves} once it has (or has failed): retirement waits for
 * none, it simply refuses while one is starting, so a semaphore is never forgotten with a lease
 * or a waiter the registry would then not shut down. A retired semaphore sends new work to the
 * registry's live one of the same name. {@link State#CLOSING} is final: shutdown ends every wait
 * and releases every lease after the starting ones are in, so none slips into the queue behind it.
 */
final class SemaphoreLedger {

    /** Where the semaphore stands in this JVM. */
    enum State {
        /** in use */
        LIVE,
        /** forgotten by the registry while idle: new work goes to the live semaphore of its name */
        RETIRED,
        /** the registry is shutting down: nothing starts any more */
        CLOSING
    }

    /** Hears which waiter ids wait here, so grants heard on the shared inbox find this semaphore. */
    interface WaiterRoutes {

        void route(String waiterId);

        void unroute(String waiterId);
    }

    private final Map<String, DefaultPermit> held = new ConcurrentHashMap<>();
    private final Map<String, PendingAcquisition> waiting = new ConcurrentHashMap<>();
    private final Listeners listeners;
    private final Observations observations;
    private final SemaphoreIdentity identity;
    private final WaiterRoutes routes;
    private final ReentrantLock lifecycle = new ReentrantLock();
    /** Signalled when no acquisition is starting any more. */
    private final Condition noneStarting = lifecycle.newCondition();
    private int starting;
    /**
     * Of each call starting now, the server time (us) of the newest reply this JVM had read when
     * it entered (0 for an adoption, whose lease keeps its old token), counted per value: the
     * sweep's watermark stays at or below the lowest (see renew.lua, S2).
     */
    private final java.util.TreeMap<Long, Integer> startingSince = new java.util.TreeMap<>();
    /** Written under {@link #lifecycle}; volatile so the reply path can skip reports of a forgotten semaphore. */
    private volatile State state = State.LIVE;

    SemaphoreLedger(SemaphoreIdentity identity, Listeners listeners, Observations observations, WaiterRoutes routes) {
        this.identity = identity;
        this.listeners = listeners;
        this.observations = observations;
        this.routes = routes;
    }

    // ---- lifecycle

    /**
     * Lets an acquisition, adoption or release start, which may make this JVM hold or wait on the
     * semaphore; {@link #started()} must follow once it has (or has failed).
     *
     * @param sinceMicros the server time of the newest reply read before this call (0: the call
     *                    may make this JVM own a lease of any token, an adoption)
     * @return false when the semaphore is retired: go on with the registry's live one
     * @throws SemaphoreUnavailableException when shutdown has begun
     */
    boolean enter(long sinceMicros) {
        lifecycle.lock();
        try {
            if (state == State.CLOSING) {
                throw new SemaphoreUnavailableException(null, Reason.SHUTTING_DOWN, "The semaphore registry is closed",
                        null);
            }
            if (state == State.RETIRED) {
                return false;
            }
            starting++;
            startingSince.merge(sinceMicros, 1, Integer::sum);
            return true;
        } finally {
            lifecycle.unlock();
        }
    }

    /** What {@link #enter(long)} let start has been handled (or never got to send anything). */
    void started(long sinceMicros) {
        lifecycle.lock();
        try {
            startingSince.computeIfPresent(sinceMicros, (since, count) -> count == 1 ? null : count - 1);
            if (--starting == 0) {
                noneStarting.signalAll();
            }
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * @return the lowest {@code sinceMicros} of the calls starting now, or {@link Long#MAX_VALUE}
     *         when none is: a lease such a call makes this JVM hold has a token at or above it
     */
    long startingSince() {
        lifecycle.lock();
        try {
            return startingSince.isEmpty() ? Long.MAX_VALUE : startingSince.firstKey();
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * LIVE → RETIRED, if this JVM neither holds nor waits on the semaphore, nor is starting to: it
     * will never hold anything again (new acquisitions go to a live one), so the registry may forget it.
     *
     * @return whether it retired now
     */
    boolean retireIfIdle() {
        lifecycle.lock();
        try {
            if (state != State.LIVE || starting > 0 || !held.isEmpty() || !waiting.isEmpty()) {
                return false;
            }
            state = State.RETIRED;
            return true;
        } finally {
            lifecycle.unlock();
        }
    }

    /** @return whether the registry has forgotten this semaphore */
    boolean isRetired() {
        return state == State.RETIRED;
    }

    /**
     * → CLOSING: lets nothing start any more, and waits for what is starting now (each within one
     * command timeout) to be in the queue or done, so shutdown ends every one of them: none can
     * slip into the queue behind it and wait for a deadline that a stopped scheduler never runs.
     */
    void close() {
        lifecycle.lock();
        try {
            state = State.CLOSING;
            while (starting > 0) {
                noneStarting.await();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lifecycle.unlock();
        }
    }

    // ---- waiting callers

    /** A caller that will wait is routed its grant, before Redis can make one. */
    void waitFor(PendingAcquisition pending) {
        waiting.put(pending.id, pending);
        routes.route(pending.id);
    }

    /** The caller no longer waits (granted, rejected, failed or abandoned). */
    void stopWaiting(PendingAcquisition pending) {
        if (waiting.remove(pending.id) != null) {
            routes.unroute(pending.id);
        }
    }

    /** @return the waiting caller of that id, or null */
    @Nullable PendingAcquisition waiter(String id) {
        return waiting.get(id);
    }

    /** @return the waiting callers now */
    List<PendingAcquisition> waiters() {
        return List.copyOf(waiting.values());
    }

    boolean hasWaiters() {
        return !waiting.isEmpty();
    }

    int waiterCount() {
        return waiting.size();
    }

    // ---- held leases

    /** The lease is held from now on, before its caller stops waiting, so the semaphore never looks idle in between. */
    void hold(Lease lease) {
        held.put(lease.id(), (DefaultPermit) lease.handle());
    }

    /** @return the lease of that id this JVM holds already, or null after holding {@code lease} */
    @Nullable Lease holdIfAbsent(Lease lease) {
        DefaultPermit existing = held.putIfAbsent(lease.id(), (DefaultPermit) lease.handle());
        return existing == null ? null : existing.lease();
    }

    /**
     * The lease, held since {@link #hold}, starts its {@code semaphore.hold} observation (beside
     * the acquisition's, under the caller's {@code parent}) and the listeners hear of it; unless
     * it has ended meanwhile (a renewal found it gone), so nobody hears of its end before its start.
     */
    void nowHeld(Lease lease, @Nullable Observation parent) {
        lease.locked(() -> {
            if (isHeld(lease)) {
                lease.observe(observations.hold(identity, lease.count(), parent));
                listeners.permitHeld(lease.handle());
            }
        });
    }

    /** Tells the listeners that a held lease's count went down; its observation goes on. */
    void recount(Lease lease) {
        lease.locked(() -> {
            if (isHeld(lease)) {
                listeners.permitCountChanged(lease.handle());
            }
        });
    }

    /**
     * The lease reached an end ({@link Lease.State}): it leaves the held leases, its observation
     * ends and the listeners hear, once.
     */
    void ended(Lease lease) {
        lease.locked(() -> {
            if (held.remove(lease.id()) != null) {
                lease.ended();
                listeners.permitEnded(lease.handle());
            }
        });
    }

    /** LOST, by whoever found it so: it leaves, and the lost-lease listeners hear. @return whether this ended it */
    boolean lose(Lease lease, String why) {
        if (!lease.lose(why)) {
            return false;
        }
        ended(lease);
        listeners.leaseLost(lease.handle());
        return true;
    }

    /** HANDED_OVER: another JVM adopted it; not counted as a lost lease. */
    void handOver(Lease lease) {
        if (lease.handOver("another process adopted it")) {
            ended(lease);
        }
    }

    private boolean isHeld(Lease lease) {
        DefaultPermit now = held.get(lease.id());
        return now != null && now.lease() == lease;
    }

    /** @return the lease of that id this JVM holds, or null */
    @Nullable Lease lease(String id) {
        DefaultPermit permit = held.get(id);
        return permit == null ? null : permit.lease();
    }

    /** @return the leases held now */
    List<Lease> leases() {
        return held.values().stream().map(DefaultPermit::lease).toList();
    }

    /** @return the permits held now (a lease of n permits counts n) */
    int permitsHeld() {
        return held.values().stream().mapToInt(DefaultPermit::count).sum();
    }

    /** @return the shortest lease length of those held, in nanoseconds */
    OptionalLong shortestLease() {
        return held.values().stream().mapToLong(permit -> permit.lease().leaseNanos()).min();
    }
}
