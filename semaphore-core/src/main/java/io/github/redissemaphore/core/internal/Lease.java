package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.micrometer.observation.Observation;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.slf4j.Logger;

/**
 * A lease this JVM holds, as an explicit state machine. Every transition is one compare-and-set,
 * so of the parties that may act on a lease at once (its holder releasing it, a renewal reply,
 * the watchdog, an adoption heard on the inbox, shutdown) exactly one ends it:
 *
 * <pre>
 *   CLAIMED --confirm: renew/cancel reply--> HELD
 *      |                                      |
 *      +--- release(): holder, release(id), shutdown -----+--> RELEASED
 *      +--- lose(): renewal finds it gone, watchdog ------+--> LOST
 *      +--- handOver(): another JVM adopted it -----------+--> HANDED_OVER
 * </pre>
 *
 * A lease granted from the queue starts {@link State#CLAIMED}: a short claim this JVM confirms with
 * one renew call; one acquired directly, or adopted, starts {@link State#HELD}. The three ends are
 * final. Whoever wins the transition to an end, and only that party, takes the lease out of the
 * {@link SemaphoreLedger} (which ends its observation and tells the listeners) and does the one
 * clean-up that end calls for:
 * <ul>
 * <li><b>release × renewal reply</b>: a reply that reads the lease as held after its release only
 *     updates its timings ({@link #confirmed} keeps the state); a reply that finds it gone cannot
 *     {@link #lose} it any more. The releaser sends the one {@code release}.</li>
 * <li><b>loss × release</b>: if the loss wins, {@code release()} does nothing (nothing is left to
 *     give back; a watchdog loss sends its own background release, as Redis may still hold it); if
 *     the release wins, the loss is not reported: the holder gave it up first.</li>
 * <li><b>adopt × expiry</b>: an adoption heard on the inbox hands the lease over only if no reply
 *     newer than the adoption has confirmed it here ({@link #confirmedBefore}): this JVM took it
 *     back. An expiry found by the renewal loses it. Either way one of them ends it; the other finds
 *     it ended.</li>
 * <li><b>shutdown × anything</b>: shutdown releases every lease still live with the same
 *     transition, so a lease that a concurrent release, loss or hand-over ended is skipped, and one
 *     shutdown released is never reported lost.</li>
 * </ul>
 * Timings (when the lease ends as this JVM measures it, its length) are ordered by Redis server
 * time under a lock: a reply that crossed a newer one is ignored. So a renewal, an extension or an
 * adoption in flight is no state of its own: none of them excludes another (Redis orders them, and
 * the newest reply wins), and only the three ends are exclusive.
 */
final class Lease {

    private static final Logger log = EngineLogs.LEASE;

    /** Where a lease stands; {@link #RELEASED}, {@link #LOST} and {@link #HANDED_OVER} are final. */
    enum State {
        /** granted from the queue: a short claim, to be confirmed by this JVM */
        CLAIMED,
        /** held, with its full lease */
        HELD,
        /** given back by this JVM */
        RELEASED,
        /** found gone in Redis (expired, released by force, wiped), or given up before it ends */
        LOST,
        /** adopted by another process: a hand-over, not a failure */
        HANDED_OVER;

        boolean isLive() {
            return this == CLAIMED || this == HELD;
        }
    }

    private final String id;
    private final String semaphoreName;
    /** Goes down when part of the lease is given back. */
    private final AtomicInteger count;
    private final long fencingToken;
    private final AtomicReference<State> state;
    /** What its holder sees: handed to listeners and callers. */
    private final Permit handle;
    private final List<Consumer<Permit>> lostListeners = new CopyOnWriteArrayList<>();
    /**
     * The {@code semaphore.hold} observation, from when this JVM holds the lease until it no
     * longer does (a partial release does not end it). Set and stopped under {@link #lock}.
     */
    private Observation hold = Observation.NOOP;
    /**
     * Orders the updates of the lease from replies, and the listeners' view of the lease's count.
     * A lock, not a monitor: no virtual thread is ever pinned by the library.
     */
    private final ReentrantLock lock = new ReentrantLock();
    /** System.nanoTime() by which Redis ends the lease unless renewed: sent-time + lease, so never late. */
    private volatile long leaseEndsNanos;
    /** The lease length Redis renews it by: of its acquisition, or of its latest extension. */
    private volatile long leaseNanos;
    /**
     * Redis server time (µs) of the reply that last set the two fields above: a reply that
     * crossed a newer one (a renewal sent before an extension, answered after it) is ignored.
     */
    private long confirmedMicros;
    /**
     * System.nanoTime() of the latest call sent that may set the lease sooner than this JVM
     * counts on ({@link #mayHaveSet}): the reply of a call sent before it cannot move the end
     * past what that call may have set. Meaningful once {@link #maySetSent}.
     */
    private long maySetSentNanos;
    private boolean maySetSent;

    /**
     * @param handle    the permit its holder sees
     * @param confirmed false for the claim of a grant from the queue (see {@code _grant.lua})
     */
    Lease(Permit handle, String semaphoreName, String id, int count, long fencingToken, Duration lease,
          long leaseEndsNanos, long confirmedMicros, boolean confirmed) {
        this.handle = handle;
        this.semaphoreName = semaphoreName;
        this.id = id;
        this.count = new AtomicInteger(count);
        this.fencingToken = fencingToken;
        this.leaseNanos = lease.toNanos();
        this.leaseEndsNanos = leaseEndsNanos;
        this.confirmedMicros = confirmedMicros;
        this.state = new AtomicReference<>(confirmed ? State.HELD : State.CLAIMED);
    }

    String id() {
        return id;
    }

    String semaphoreName() {
        return semaphoreName;
    }

    Permit handle() {
        return handle;
    }

    int count() {
        return count.get();
    }

    long fencingToken() {
        return fencingToken;
    }

    State state() {
        return now();
    }

    /** @return whether no end has been reached, and the lease has not run out as this JVM measures it */
    boolean isHeld() {
        return now().isLive() && System.nanoTime() - leaseEndsNanos < 0;
    }

    /** @return the lease left as this JVM measures it; zero once ended */
    Duration remaining() {
        long left = leaseEndsNanos - System.nanoTime();
        return now().isLive() && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /** @return whether the lease is still the claim of a grant from the queue, to be confirmed */
    boolean needsConfirmation() {
        return now() == State.CLAIMED;
    }

    /** Transition to {@link State#RELEASED}. @return false when it had ended already */
    boolean release() {
        return end(State.RELEASED);
    }

    /**
     * Transition to {@link State#LOST}: logs a WARN and runs the {@code onLost} listeners, once.
     *
     * @return false when it had ended already
     */
    boolean lose(String why) {
        if (!end(State.LOST)) {
            return false;
        }
        log.warn("Lost the lease {} on semaphore '{}' (fencing token {}): {}", Ids.shown(id), semaphoreName,
                fencingToken, why);
        notifyLost();
        return true;
    }

    /**
     * Transition to {@link State#HANDED_OVER}: another process adopted the lease. Logged at INFO;
     * the {@code onLost} listeners run (the permit is no longer this JVM's to use), once.
     *
     * @return false when it had ended already
     */
    boolean handOver(String why) {
        if (!end(State.HANDED_OVER)) {
            return false;
        }
        log.info("The lease {} on semaphore '{}' (fencing token {}) left this JVM: {}", Ids.shown(id), semaphoreName,
                fencingToken, why);
        notifyLost();
        return true;
    }

    /** One compare-and-set from the live state it is in; tried again only if a confirmation came in between. */
    private boolean end(State target) {
        while (true) {
            State before = now();
            if (!before.isLive()) {
                return false;
            }
            if (state.compareAndSet(before, target)) {
                return true;
            }
        }
    }

    /** Registers a listener for a loss or hand-over; runs it at once if one happened already. */
    void onLost(Consumer<Permit> listener) {
        lostListeners.add(listener);
        State now = now();
        if ((now == State.LOST || now == State.HANDED_OVER) && lostListeners.remove(listener)) {
            notify(listener);
        }
    }

    private void notifyLost() {
        for (Consumer<Permit> listener : lostListeners) {
            if (lostListeners.remove(listener)) {
                notify(listener);
            }
        }
    }

    private void notify(Consumer<Permit> listener) {
        try {
            listener.accept(handle);
        } catch (RuntimeException e) {
            log.warn("onLost listener of permit {} failed", Ids.shown(id), e);
        }
    }

    /**
     * Gives back {@code permits} of the count, unless that would leave none: the count goes down
     * here first, so of two parts given back at once, each sends what the lease keeps after both,
     * and Redis applies the smaller.
     *
     * @return the count kept, or -1 when {@code permits} is the whole count now (a release, not a part)
     * @throws IllegalArgumentException unless 1 <= permits <= count
     * @throws IllegalStateException    when the lease has ended
     */
    int givePart(int permits) {
        while (true) {
            int now = count.get();
            if (permits < 1 || permits > now) {
                throw new IllegalArgumentException("permits must be between 1 and " + now
                        + " (the permits this lease holds), but was " + permits);
            }
            if (permits == now) {
                return -1;
            }
            checkHeld();
            if (count.compareAndSet(now, now - permits)) {
                return now - permits;
            }
        }
    }

    /** @throws IllegalStateException when the lease has ended */
    void checkHeld() {
        if (!now().isLive()) {
            throw notHeld();
        }
    }

    /** @return the exception of an operation on a lease this JVM no longer holds */
    IllegalStateException notHeld() {
        return new IllegalStateException("Permit " + Ids.shown(id) + " of semaphore '" + semaphoreName
                + "' is no longer held by this JVM (released, expired, lost, or adopted by another process)");
    }

    /** Runs {@code action} under the lease's lock. */
    void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Redis extended the lease by {@code lease} in a call sent at {@code sentNanos}, answered at
     * server time {@code serverMicros}: a claim is now {@link State#HELD} (the transition
     * CLAIMED→HELD; an ended lease stays ended). Timings a newer reply set already are kept.
     */
    void confirmed(long serverMicros, long sentNanos, Duration lease) {
        lock.lock();
        try {
            state.compareAndSet(State.CLAIMED, State.HELD);
            if (serverMicros > confirmedMicros) {
                confirmedMicros = serverMicros;
                long ends = sentNanos + lease.toNanos();
                if (maySetSent && sentNanos - maySetSentNanos < 0) {
                    // A call sent after this one may have set a sooner end, in Redis after it.
                    leaseNanos = Math.min(leaseNanos, lease.toNanos());
                    leaseEndsNanos = Math.min(leaseEndsNanos, ends);
                } else {
                    leaseNanos = lease.toNanos();
                    leaseEndsNanos = ends;
                }
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
     * A call sent at {@code sentNanos} may set the lease to end {@code lease} after Redis runs it
     * (a renewal, an extension): from its send until Redis says (and if it gets no answer), this
     * JVM counts on the sooner of that and the end it had.
     */
    void mayHaveSet(long sentNanos, Duration lease) {
        lock.lock();
        try {
            if (!maySetSent || sentNanos - maySetSentNanos > 0) {
                maySetSentNanos = sentNanos;
                maySetSent = true;
            }
            leaseNanos = Math.min(leaseNanos, lease.toNanos());
            leaseEndsNanos = Math.min(leaseEndsNanos, sentNanos + lease.toNanos());
        } finally {
            lock.unlock();
        }
    }

    /** This JVM holds the lease from now on: {@code hold} observes it. Called under the lock, once. */
    void observe(Observation hold) {
        this.hold = hold;
    }

    /**
     * This JVM no longer holds the lease: ends its observation, as released, lost or adopted (by
     * another process). Called under the lock, once, after the lease reached an end.
     */
    void ended() {
        State end = now();
        Observations.holdEnded(hold, end == State.LOST ? "lost" : end == State.HANDED_OVER ? "adopted" : "released");
    }

    /** @return System.nanoTime() at which the lease ends as far as this JVM can tell */
    long leaseEndsNanos() {
        return leaseEndsNanos;
    }

    /** @return the lease length Redis renews it by, as this JVM last heard */
    long leaseNanos() {
        return leaseNanos;
    }

    /** @return the state now: never null, as the reference starts set and is only ever set to a state */
    private State now() {
        return Objects.requireNonNull(state.get());
    }

    @Override
    public String toString() {
        return "Permit[" + semaphoreName + ", id=" + Ids.shown(id) + ", count=" + count + ", token=" + fencingToken
                + ", " + now() + "]";
    }
}
