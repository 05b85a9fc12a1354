package io.github.redissemaphore.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Hears what the semaphores of one registry do, for metrics and logs. Every call carries only
 * what the Redis scripts already returned: listening costs no Redis call. Methods run on the
 * caller's or a library thread and must be quick and must not throw.
 */
public interface SemaphoreListener {

    /** How an acquisition ended. */
    enum Outcome {
        /** a permit was granted */
        ACQUIRED,
        /** no permit within the wait */
        REJECTED,
        /** Redis failed, or the registry closed */
        ERROR,
        /** the caller was interrupted, or cancelled the future of an asynchronous acquisition */
        CANCELLED
    }

    /** An acquisition ended after {@code elapsed}. */
    default void acquisitionEnded(String semaphore, int permits, Outcome outcome, Duration elapsed) {
    }

    /**
     * A caller of this JVM joined the queue of {@code semaphore} at {@code position} (1: the head),
     * with the wait predicted there: its place times the average hold, over the permits; null
     * while no hold has been measured.
     */
    default void queued(String semaphore, int permits, int position, @Nullable Duration predictedWait) {
    }

    /**
     * A caller of this JVM joined the queue of {@code semaphore} because the rate's window was full
     * ({@link SemaphoreSettings#rateLimit()} grants in the last {@link SemaphoreSettings#ratePeriod()}),
     * not for want of permits: the permits would have let it in (or the head it queued behind), so
     * its grant waits for the window to free a slot. Heard after {@link #queued}, each time a
     * caller joins the queue so (a re-join after its entry vanished counts again): what a counter
     * of grants delayed by the rate counts (refusals by the rate are {@link #rejected} with
     * {@link SemaphoreRejectedException.Reason#RATE_LIMITED}).
     */
    default void delayedByRate(String semaphore, int permits) {
    }

    /**
     * An acquisition got no permit, for {@code reason} (then {@link #acquisitionEnded} follows with
     * {@link Outcome#REJECTED}): what a counter of refusals by reason counts.
     */
    default void rejected(String semaphore, int permits, SemaphoreRejectedException.Reason reason) {
    }

    /**
     * While Redis could not be reached, a call of this JVM was admitted without it:
     * {@link WhenUnavailable#LOCAL}, out of this instance's share; {@link WhenUnavailable#ALLOW},
     * unguarded. What a counter of admissions without Redis counts.
     */
    default void admittedWithoutRedis(String semaphore, int permits, WhenUnavailable mode) {
    }

    /**
     * {@code semaphore} entered degraded mode ({@code degraded}: a call found Redis unreachable, and
     * calls are decided without it) or left it (Redis answers again; the permits granted meanwhile
     * were written to Redis).
     */
    default void degradedModeChanged(String semaphore, boolean degraded) {
    }

    /** This JVM now holds {@code permit}. */
    default void permitHeld(Permit permit) {
    }

    /** This JVM no longer holds {@code permit}: released, expired or lost. */
    default void permitEnded(Permit permit) {
    }

    /**
     * Part of {@code permit} was given back ({@link Permit#release(int)}): this JVM still holds
     * it, with {@code permit.count()} permits now. By default heard as {@link #permitEnded} then
     * {@link #permitHeld} with the new count; a listener that times leases overrides it so the
     * permits kept are not timed afresh.
     */
    default void permitCountChanged(Permit permit) {
        permitEnded(permit);
        permitHeld(permit);
    }

    /** Renewal found {@code permit} gone while it was held. */
    default void leaseLost(Permit permit) {
    }

    /**
     * {@link Permit#release()} (or {@link Permit#release(int)}) of a permit of {@code semaphore}
     * returned before Redis confirmed the release, because Redis was not answering: the release
     * goes on in the background until Redis answers or the lease ends.
     */
    default void releaseDeferred(String semaphore) {
    }

    /** One renewal call extended {@code leases} leases of {@code semaphore}. */
    default void leasesRenewed(String semaphore, int leases) {
    }

    /** A script reported the semaphore's usage: the figures for gauges. */
    default void usageReported(String semaphore, int limit, int used, int waiters) {
    }

    /**
     * A script reported the usage of the cap of a capped semaphore, all its keys together
     * ({@link SemaphoreSettings#totalPermits()}), named by its base name ({@code "exports"}): the
     * figures for gauges of the whole, beside the per-key ones of {@link #usageReported}.
     */
    default void totalUsageReported(String semaphore, int limit, int used, int waiters) {
    }

    /**
     * The registry forgot an idle keyed semaphore ({@link SemaphoreRegistry#semaphores()}): what
     * was kept about it (meters, say) can go. Using the name again starts it afresh.
     */
    default void semaphoreForgotten(String semaphore) {
    }
}
