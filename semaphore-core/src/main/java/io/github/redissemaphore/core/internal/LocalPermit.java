package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * A permit this instance granted on its own while Redis could not be reached: out of its share
 * ({@code guarded}), or unguarded ({@code when-unavailable: allow}). A guarded one is written
 * back to Redis on recovery and from then on is the Redis permit it was written as, which renewal
 * keeps like any other; its fencing token stays 0, the holder having used it already.
 *
 * <pre>
 *   LOCAL --writing()--> WRITING_BACK --written(permit)--> IN_REDIS --(its release, loss)--> ended
 *     ^                        |
 *     +--- written(failure) ---+        LOCAL, or WRITING_BACK on its reply --release()--> ENDED
 * </pre>
 * A release while it is written back is kept until the reply says where it went: the permit
 * Redis granted is released at once, or, the write-back having failed, the local one.
 */
final class LocalPermit implements Permit {

    private enum State { LOCAL, WRITING_BACK, IN_REDIS, ENDED }

    /** Where a guarded permit's permits go back while it is local. */
    interface Share {

        void givenBack(LocalPermit permit, int permits);
    }

    private final String id = Ids.permitId();
    /** Guards the state below. */
    private final ReentrantLock lock = new ReentrantLock();
    private final String semaphoreName;
    private final @Nullable Share share;
    private final List<Consumer<Permit>> lostListeners = new ArrayList<>();
    private State state = State.LOCAL;
    private int count;
    private Duration lease;
    /** Permits given back while it was written back, to give back from the Redis permit. */
    private int givenBackMeanwhile;
    private @Nullable Permit inRedis;

    /** @param share null for an unguarded permit, which nothing counts */
    LocalPermit(String semaphoreName, int count, Duration lease, @Nullable Share share) {
        this.semaphoreName = semaphoreName;
        this.count = count;
        this.lease = lease;
        this.share = share;
    }

    boolean guarded() {
        return share != null;
    }

    /** @return whether it is held and local: to be written back now (then it is WRITING_BACK) */
    boolean writing() {
        lock.lock();
        try {
            if (state != State.LOCAL || share == null) {
                return false;
            }
            state = State.WRITING_BACK;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** @return the lease it is written back with */
    Duration lease() {
        lock.lock();
        try {
            return lease;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The write-back's outcome: {@code permit}, the Redis permit it now is, or null when it
     * failed (it is local again).
     *
     * @return how many of its permits left the local share: all it was written back with when it
     *         is in Redis now (or was released meanwhile), else those released meanwhile
     */
    int written(@Nullable Permit permit) {
        int part;
        int writtenBack;
        List<Consumer<Permit>> listeners;
        lock.lock();
        try {
            writtenBack = count;
            if (permit == null) {
                part = givenBackMeanwhile;
                givenBackMeanwhile = 0;
                count -= part;
                state = count == 0 ? State.ENDED : State.LOCAL;
                return part;
            }
            inRedis = permit;
            state = State.IN_REDIS;
            part = givenBackMeanwhile;
            givenBackMeanwhile = 0;
            listeners = List.copyOf(lostListeners);
            lostListeners.clear();
            part = part >= writtenBack ? -writtenBack : part;
        } finally {
            lock.unlock();
        }
        // Off the lock: the Redis permit may call a listener at once.
        if (part >= 0) {
            listeners.forEach(listener -> permit.onLost(lost -> listener.accept(this)));
        }
        if (part < 0) {
            permit.release();
            return -part;
        }
        if (part > 0) {
            permit.release(part);
        }
        return writtenBack;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String semaphoreName() {
        return semaphoreName;
    }

    @Override
    public int count() {
        lock.lock();
        try {
            return inRedis != null ? inRedis.count() : count;
        } finally {
            lock.unlock();
        }
    }

    /** @return 0: granted without Redis, it has no fencing token (see {@link Permit#fencingToken()}) */
    @Override
    public long fencingToken() {
        return 0;
    }

    @Override
    public boolean isLocal() {
        return true;
    }

    @Override
    public boolean isHeld() {
        lock.lock();
        try {
            return inRedis != null ? inRedis.isHeld() : state != State.ENDED;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void onLost(Consumer<Permit> listener) {
        Permit redis;
        lock.lock();
        try {
            redis = inRedis;
            if (redis == null) {
                // Never lost while local: no lease runs out where nothing counts it.
                lostListeners.add(listener);
                return;
            }
        } finally {
            lock.unlock();
        }
        redis.onLost(lost -> listener.accept(this));
    }

    /** @return the lease of the Redis permit it was written back as; while local, its lease length (no lease runs) */
    @Override
    public Duration leaseRemaining() {
        lock.lock();
        try {
            if (inRedis != null) {
                return inRedis.leaseRemaining();
            }
            return state == State.ENDED ? Duration.ZERO : lease;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void extend(Duration leaseTime) {
        SemaphoreSettings.checkLease("leaseTime", leaseTime);
        Permit redis;
        lock.lock();
        try {
            if (state == State.ENDED) {
                throw new IllegalStateException("permit " + Ids.shown(id) + " of semaphore '" + semaphoreName
                        + "' is no longer held");
            }
            lease = leaseTime;
            redis = inRedis;
        } finally {
            lock.unlock();
        }
        if (redis != null) {
            redis.extend(leaseTime);
        }
    }

    @Override
    public void release() {
        Permit redis;
        int local;
        lock.lock();
        try {
            redis = inRedis;
            local = 0;
            if (redis == null) {
                if (state == State.LOCAL) {
                    state = State.ENDED;
                    local = count;
                } else if (state == State.WRITING_BACK) {
                    givenBackMeanwhile = count;
                }
            }
        } finally {
            lock.unlock();
        }
        if (redis != null) {
            redis.release();
        } else if (local > 0 && share != null) {
            share.givenBack(this, local);
        }
    }

    @Override
    public void release(int permits) {
        Permit redis;
        int givenBack = 0;
        lock.lock();
        try {
            redis = inRedis;
            if (redis == null) {
                if (state == State.ENDED) {
                    throw new IllegalStateException("permit " + Ids.shown(id) + " of semaphore '" + semaphoreName
                            + "' is no longer held");
                }
                int held = count - givenBackMeanwhile;
                if (permits < 1 || permits > held) {
                    throw new IllegalArgumentException("permits must be between 1 and " + held
                            + " (the permits of this lease), but was " + permits);
                }
                if (permits < held && state == State.WRITING_BACK) {
                    givenBackMeanwhile += permits;
                    return;
                }
                if (permits < held) {
                    count -= permits;
                    givenBack = permits;
                }
            }
        } finally {
            lock.unlock();
        }
        if (redis != null) {
            redis.release(permits);
        } else if (givenBack == 0) {
            release();
        } else if (share != null) {
            share.givenBack(this, givenBack);
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LocalPermit[" + semaphoreName + ", " + Ids.shown(id) + ", " + count() + (guarded() ? "" : ", unguarded")
                + "]";
    }
}
