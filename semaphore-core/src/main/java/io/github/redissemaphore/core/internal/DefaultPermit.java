package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * The permit its holder sees: reads its {@link Lease}, and hands the moves its holder makes
 * (release, part, extend) to {@link PermitActions}. Nothing in the engine calls it back.
 */
final class DefaultPermit implements Permit {

    /** What the holder of a permit can do to it: one script call each (see {@link HeldPermits}). */
    interface PermitActions {

        /** The holder releases the whole lease: sent only if this ends it ({@link Lease#release()}). */
        void release(Lease lease);

        /** The holder gave back part of the lease, whose count is down to {@code keep} already. */
        void releasePart(Lease lease, int keep);

        /** The holder makes the lease end {@code leaseTime} from now. */
        void extend(Lease lease, Duration leaseTime);
    }

    private final Lease lease;
    private final PermitActions actions;

    /** Makes the permit and its lease; see {@link Lease#Lease} for the arguments. */
    DefaultPermit(PermitActions actions, String semaphoreName, String id, int count, long fencingToken,
                  Duration lease, long leaseEndsNanos, long confirmedMicros, boolean confirmed) {
        this.actions = actions;
        this.lease = new Lease(this, semaphoreName, id, count, fencingToken, lease, leaseEndsNanos, confirmedMicros,
                confirmed);
    }

    /** @return its lease, the state the engine works on */
    Lease lease() {
        return lease;
    }

    @Override
    public String id() {
        return lease.id();
    }

    @Override
    public String semaphoreName() {
        return lease.semaphoreName();
    }

    @Override
    public int count() {
        return lease.count();
    }

    @Override
    public long fencingToken() {
        return lease.fencingToken();
    }

    @Override
    public boolean isHeld() {
        return lease.isHeld();
    }

    @Override
    public Duration leaseRemaining() {
        return lease.remaining();
    }

    @Override
    public void extend(Duration leaseTime) {
        SemaphoreSettings.checkLease("leaseTime", leaseTime);
        lease.checkHeld();
        actions.extend(lease, leaseTime);
    }

    @Override
    public void onLost(Consumer<Permit> listener) {
        lease.onLost(listener);
    }

    @Override
    public void release() {
        actions.release(lease);
    }

    @Override
    public void release(int permits) {
        int keep = lease.givePart(permits);
        if (keep < 0) {
            release();
        } else {
            actions.releasePart(lease, keep);
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return lease.toString();
    }
}
