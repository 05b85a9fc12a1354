package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A lease this JVM holds; its semaphore renews it and learns when it is lost. */
final class DefaultPermit implements Permit {

    private static final Logger log = LoggerFactory.getLogger(DefaultPermit.class);

    private enum Phase { HELD, RELEASED, LOST }

    private final DefaultRedisSemaphore semaphore;
    private final String id;
    private final int count;
    private final long fencingToken;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.HELD);
    private final List<Consumer<Permit>> lostListeners = new CopyOnWriteArrayList<>();
    /** System.nanoTime() by which Redis ends the lease unless renewed: sent-time + lease, so never late. */
    private volatile long leaseEndsNanos;
    /**
     * False while the lease is the short claim of a grant from the queue: this JVM must confirm it
     * (one renew call) to get the full lease. See {@code _common.lua}, grantWaiters.
     */
    private volatile boolean confirmed;

    DefaultPermit(DefaultRedisSemaphore semaphore, String id, int count, long fencingToken, long leaseEndsNanos,
                  boolean confirmed) {
        this.semaphore = semaphore;
        this.id = id;
        this.count = count;
        this.fencingToken = fencingToken;
        this.leaseEndsNanos = leaseEndsNanos;
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
        return count;
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
    public void onLost(Consumer<Permit> listener) {
        lostListeners.add(listener);
        if (phase.get() == Phase.LOST && lostListeners.remove(listener)) {
            notify(listener);
        }
    }

    @Override
    public void release() {
        if (phase.compareAndSet(Phase.HELD, Phase.RELEASED)) {
            semaphore.released(this);
        }
    }

    @Override
    public void close() {
        release();
    }

    /** Marks the permit released without telling Redis: the caller sends the release itself. @return false when no longer held */
    boolean markReleased() {
        return phase.compareAndSet(Phase.HELD, Phase.RELEASED);
    }

    /** Renewal extended the lease (a claim is now a full lease); {@code sentNanos} is when the renew call was sent. */
    void renewed(long sentNanos, long leaseNanos) {
        leaseEndsNanos = sentNanos + leaseNanos;
        confirmed = true;
    }

    /** @return whether the lease is still the claim of a grant from the queue, to be confirmed */
    boolean needsConfirmation() {
        return !confirmed && phase.get() == Phase.HELD;
    }

    /** @return System.nanoTime() at which the lease ends as far as this JVM can tell */
    long leaseEndsNanos() {
        return leaseEndsNanos;
    }


    /** Marks the lease lost and tells the listeners, once. @return false when no longer held anyway */
    boolean lost(String why) {
        if (!phase.compareAndSet(Phase.HELD, Phase.LOST)) {
            return false;
        }
        log.warn("Lost the lease {} on semaphore '{}' (fencing token {}): {}", id, semaphoreName(), fencingToken, why);
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
            log.warn("onLost listener of permit {} failed", id, e);
        }
    }

    @Override
    public String toString() {
        return "Permit[" + semaphoreName() + ", id=" + id + ", count=" + count + ", token=" + fencingToken + ", "
                + phase.get() + "]";
    }
}
