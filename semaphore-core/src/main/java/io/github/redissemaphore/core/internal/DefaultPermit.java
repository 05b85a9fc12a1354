package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.micrometer.observation.Observation;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A lease this JVM holds; its semaphore renews it and learns when it is lost. */
final class DefaultPermit implements Permit {

    private static final Logger log = LoggerFactory.getLogger(DefaultPermit.class);

    private enum Phase { HELD, RELEASED, LOST }

    private final DefaultRedisSemaphore semaphore;
    private final String id;
    /** Goes down when part of the lease is given back; see {@link #release(int)}. */
    private final AtomicInteger count;
    private final long fencingToken;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.HELD);
    /**
     * The {@code semaphore.hold} observation, from when this JVM holds the lease until it no
     * longer does (a partial release does not end it). Set and stopped under {@link #lock}.
     */
    private Observation hold = Observation.NOOP;
    /** Lost to an adoption by another process: a hand-over, which its observation tells apart. */
    private volatile boolean handedOver;
    private final List<Consumer<Permit>> lostListeners = new CopyOnWriteArrayList<>();
    /** System.nanoTime() by which Redis ends the lease unless renewed: sent-time + lease, so never late. */
    private volatile long leaseEndsNanos;
    /**
     * Orders the updates of the lease from replies, and the listeners' view of the permit's count.
     * A lock, not a monitor: no virtual thread is ever pinned by the library.
     */
    private final ReentrantLock lock = new ReentrantLock();
    /** The lease length Redis renews it by: of its acquisition, or of its latest extension. */
    private volatile long leaseNanos;
    /**
     * Redis server time (µs) of the reply that last set the two fields above: a reply that
     * crossed a newer one (a renewal sent before an extension, answered after it) is ignored.
     */
    private long confirmedMicros;
    /**
     * False while the lease is the short claim of a grant from the queue: this JVM must confirm it
     * (one renew call) to get the full lease. See {@code _common.lua}, grantWaiters.
     */
    private volatile boolean confirmed;

    DefaultPermit(DefaultRedisSemaphore semaphore, String id, int count, long fencingToken, Duration lease,
                  long leaseEndsNanos, long confirmedMicros, boolean confirmed) {
        this.semaphore = semaphore;
        this.id = id;
        this.count = new AtomicInteger(count);
        this.fencingToken = fencingToken;
        this.leaseNanos = lease.toNanos();
        this.leaseEndsNanos = leaseEndsNanos;
        this.confirmedMicros = confirmedMicros;
        this.confirmed = confirmed;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String semaphoreName() {
        return semaphore.name();
    }

    @Override
    public int count() {
        return count.get();
    }

    @Override
    public long fencingToken() {
        return fencingToken;
    }

    @Override
    public boolean isHeld() {
        return phase.get() == Phase.HELD && System.nanoTime() - leaseEndsNanos < 0;
    }

    @Override
    public Duration leaseRemaining() {
        long left = leaseEndsNanos - System.nanoTime();
        return phase.get() == Phase.HELD && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    @Override
    public void extend(Duration leaseTime) {
        SemaphoreSettings.checkLease("leaseTime", leaseTime);
        checkHeld();
        semaphore.moves.extend(this, leaseTime);
    }

    @Override
    public void onLost(Consumer<Permit> listener) {
        lostListeners.add(listener);
        if (phase.get() == Phase.LOST && lostListeners.remove(listener)) {
            notify(listener);
        }
    }

    @Override
    public void release() {
        if (phase.compareAndSet(Phase.HELD, Phase.RELEASED)) {
            semaphore.moves.released(this);
        }
    }

    @Override
    public void release(int permits) {
        while (true) {
            int now = count.get();
            if (permits < 1 || permits > now) {
                throw new IllegalArgumentException("permits must be between 1 and " + now
                        + " (the permits this lease holds), but was " + permits);
            }
            if (permits == now) {
                release();
                return;
            }
            checkHeld();
            // The count goes down here first: of two parts given back at once, each sends what
            // the lease keeps after both, and Redis applies the smaller.
            if (count.compareAndSet(now, now - permits)) {
                semaphore.moves.releasedPart(this, now - permits);
                return;
            }
        }
    }

    @Override
    public void close() {
        release();
    }

    private void checkHeld() {
        if (phase.get() != Phase.HELD) {
            throw notHeld();
        }
    }

    /** Runs {@code action} under the permit's lock. */
    void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /** @return the exception of an operation on a lease this JVM no longer holds */
    IllegalStateException notHeld() {
        return new IllegalStateException("Permit " + Ids.shown(id) + " of semaphore '" + semaphoreName()
                + "' is no longer held by this JVM (released, expired, lost, or adopted by another process)");
    }

    /** Marks the permit released without telling Redis: the caller sends the release itself. @return false when no longer held */
    boolean markReleased() {
        return phase.compareAndSet(Phase.HELD, Phase.RELEASED);
    }

    /**
     * Redis extended the lease by {@code lease} in a call sent at {@code sentNanos}, answered at
     * server time {@code serverMicros} (a claim is now a full lease). Ignored if a newer reply
     * set the lease already.
     */
    void confirmed(long serverMicros, long sentNanos, Duration lease) {
        lock.lock();
        try {
            confirmed = true;
            if (serverMicros > confirmedMicros) {
                confirmedMicros = serverMicros;
                leaseNanos = lease.toNanos();
                leaseEndsNanos = sentNanos + leaseNanos;
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return whether the last reply that set the lease came from before server time {@code micros} */
    boolean confirmedBefore(long micros) {
        lock.lock();
        try {
            return confirmedMicros < micros;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A call that may or may not have set the lease to {@code lease} got no answer: until Redis
     * says, this JVM counts on the shorter of the two.
     */
    void mayHaveSet(long sentNanos, Duration lease) {
        lock.lock();
        try {
            leaseNanos = Math.min(leaseNanos, lease.toNanos());
            leaseEndsNanos = Math.min(leaseEndsNanos, sentNanos + lease.toNanos());
        } finally {
            lock.unlock();
        }
    }

    /** @return whether the lease is still the claim of a grant from the queue, to be confirmed */
    boolean needsConfirmation() {
        return !confirmed && phase.get() == Phase.HELD;
    }

    /** This JVM holds the lease from now on: {@code hold} observes it. Called under the lock, once. */
    void observe(Observation hold) {
        this.hold = hold;
    }

    /**
     * This JVM no longer holds the lease: ends its observation, as released, lost or adopted (by
     * another process). Called under the lock, once.
     */
    void ended() {
        Observations.holdEnded(hold, phase.get() != Phase.LOST ? "released" : handedOver ? "adopted" : "lost");
    }

    /** @return System.nanoTime() at which the lease ends as far as this JVM can tell */
    long leaseEndsNanos() {
        return leaseEndsNanos;
    }

    /** @return the lease length Redis renews it by, as this JVM last heard */
    long leaseNanos() {
        return leaseNanos;
    }

    /**
     * Marks the lease lost and tells the listeners, once.
     *
     * @param expected an adoption by another process: a hand-over, logged at INFO, not a WARN
     * @return false when no longer held anyway
     */
    boolean lost(String why, boolean expected) {
        if (!phase.compareAndSet(Phase.HELD, Phase.LOST)) {
            return false;
        }
        handedOver = expected;
        if (expected) {
            log.info("The lease {} on semaphore '{}' (fencing token {}) left this JVM: {}", Ids.shown(id),
                    semaphoreName(), fencingToken, why);
        } else {
            log.warn("Lost the lease {} on semaphore '{}' (fencing token {}): {}", Ids.shown(id), semaphoreName(),
                    fencingToken, why);
        }
        for (Consumer<Permit> listener : lostListeners) {
            if (lostListeners.remove(listener)) {
                notify(listener);
            }
        }
        return true;
    }

    private void notify(Consumer<Permit> listener) {
        try {
            listener.accept(this);
        } catch (RuntimeException e) {
            log.warn("onLost listener of permit {} failed", Ids.shown(id), e);
        }
    }

    @Override
    public String toString() {
        return "Permit[" + semaphoreName() + ", id=" + Ids.shown(id) + ", count=" + count + ", token=" + fencingToken
                + ", " + phase.get() + "]";
    }
}
