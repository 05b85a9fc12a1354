package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A counting semaphore shared by every JVM that talks to the same Redis. Obtain one from a
 * {@link SemaphoreRegistry}.
 */
public interface RedisSemaphore {

    /** @return the name, as given to the registry */
    String name();

    /** @return the settings this JVM uses for this semaphore */
    SemaphoreSettings settings();

    /** Takes one permit if it is free now (and, when fair, nobody waits). Never waits. */
    Optional<Permit> tryAcquire();

    /** Takes one permit, waiting up to {@code maxWait} in arrival order. */
    Optional<Permit> tryAcquire(Duration maxWait) throws InterruptedException;

    /** Takes {@code permits} permits at once, waiting up to {@code maxWait} in arrival order. */
    Optional<Permit> tryAcquire(int permits, Duration maxWait) throws InterruptedException;

    /**
     * Takes {@code permits} permits at once, waiting up to {@code maxWait} in arrival order: as
     * {@link #tryAcquire(int, Duration)}, but a refusal is the semaphore's own exception, as it
     * decided it, rather than an empty result.
     *
     * @throws SemaphoreRejectedException when no permit came within {@code maxWait}
     */
    default Permit acquire(int permits, Duration maxWait) throws InterruptedException {
        return tryAcquire(permits, maxWait).orElseThrow(() -> new SemaphoreRejectedException(name(), permits, maxWait));
    }

    /**
     * Takes {@code permits} permits at once, waiting up to {@code maxWait} in arrival order, on a
     * lease of {@code leaseTime} (100 ms..24 h) instead of {@code settings().leaseTime()}: renewal,
     * when on, extends it by that length.
     */
    Optional<Permit> tryAcquire(int permits, Duration maxWait, Duration leaseTime) throws InterruptedException;

    /**
     * Takes one permit, waiting up to {@code settings().waitTime()}.
     *
     * @throws SemaphoreRejectedException when no permit came within the wait time
     */
    Permit acquire() throws InterruptedException;

    /**
     * Takes {@code permits} permits without blocking any thread while waiting. The future fails
     * with {@link SemaphoreRejectedException} when the wait ends without a permit; cancelling it
     * leaves the queue (a permit granted meanwhile is released).
     */
    CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait);

    /** {@link #acquireAsync(int, Duration)} on a lease of {@code leaseTime} (100 ms..24 h). */
    CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait, Duration leaseTime);

    /**
     * Takes over a lease acquired elsewhere (another JVM, or another registry), by its
     * {@link Permit#id()}: from now on this JVM renews it (when auto-renewal is on) and can
     * extend or release it, by the lease length it was acquired with. The JVM that held it
     * finds it gone at its next renewal: there, {@link Permit#isHeld()} turns false and
     * {@link Permit#onLost} listeners run, and its {@code release()} no longer touches it.
     * Adopting a lease this JVM holds already returns that permit.
     *
     * @return the permit, with its count and fencing token; empty when the id holds nothing
     *         (released, expired, never existed, or still waiting in the queue)
     */
    Optional<Permit> adopt(String permitId);

    /**
     * Releases any lease by its {@link Permit#id()}, whichever JVM holds it, and hands its permits
     * to the waiters, in one Redis call. A permit of this JVM with that id is released too; the
     * JVM that held it is told on its inbox, as after {@link #adopt}: a hand-over, not a lost lease
     * (if that message is lost, its next renewal finds the lease gone and reports it lost).
     *
     * @return false when the id held nothing (released before, expired, or never existed)
     * @throws SemaphoreUnavailableException when Redis did not answer within the command timeout:
     *         the lease is then released or still its holder's; one this JVM held is released
     *         again in the background until Redis answers or its lease ends
     */
    boolean release(String permitId);

    /**
     * Ends any lease by its {@link Permit#id()}, whichever JVM holds it: an operator's tool for a
     * stuck holder (the {@code semaphores} endpoint's delete operation). Unlike
     * {@link #release(String)}, it is no hand-over: the JVM that held it finds it lost at its next
     * renewal ({@link Permit#isHeld()} false, {@link Permit#onLost} listeners run, a lost lease
     * counted). The permits go to the waiters at once.
     *
     * @return false when the id held nothing
     * @throws SemaphoreUnavailableException when Redis did not answer within the command timeout
     * @throws UnsupportedOperationException when this implementation cannot do it (the default)
     */
    default boolean forceRelease(String permitId) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot force a release");
    }

    /** @return the state in Redis now: limit, usage, holders and waiters in queue order */
    SemaphoreState state();

    /** @return what this JVM holds and waits for on this semaphore, from memory (no Redis call) */
    LocalState localState();

    /**
     * Sets the semaphore's limit in Redis at runtime: every JVM follows it from its next call on,
     * whatever its configured {@link SemaphoreSettings#permits()}, until
     * {@link #clearLimitOverride()}. Lowering it takes no permit from its holder: nobody is granted
     * until the permits held fit the new limit, in queue order (a waiter asking for more than the
     * new limit is rejected). Raising it serves the queue at once. It lasts in Redis until cleared,
     * even while the semaphore is idle (not across a loss of Redis' data). On a key of a capped
     * semaphore it is that key's limit; the cap's is {@link SemaphoreCap#overrideLimit(int)}.
     *
     * @param limit the permits every JVM grants up to, 1..1,000,000
     * @throws IllegalArgumentException when {@code limit} is outside 1..1,000,000
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     */
    void overrideLimit(int limit);

    /**
     * Clears the runtime limit set by {@link #overrideLimit(int)}: each JVM grants up to its
     * configured permits again (a raise serves the queue at once). Does nothing when none is set.
     *
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     */
    void clearLimitOverride();

    /**
     * Sets the semaphore's rate in Redis at runtime: every JVM's calls follow it from their next
     * call on, whatever their configured {@link SemaphoreSettings#rateLimit()} and
     * {@link SemaphoreSettings#ratePeriod()}, until {@link #clearRateLimitOverride()}: at most
     * {@code rateLimit} grants in any window of {@code ratePeriod}, fleet-wide. The window is the
     * same (the grants made before count): a lower limit or a shorter period holds at once; a
     * higher limit serves the queue at once. It takes no permit from a holder and gives no slot
     * back. It lasts in Redis until cleared, even while the semaphore is idle (not across a loss of
     * Redis' data). The permits' runtime limit ({@link #overrideLimit(int)}) is separate.
     *
     * @param rateLimit  the grants every JVM makes per {@code ratePeriod}, 1..{@value SemaphoreSettings#MAX_RATE_LIMIT}
     * @param ratePeriod the window of the rate, {@value SemaphoreSettings#MIN_RATE_PERIOD_MILLIS} ms..24 h
     * @throws IllegalArgumentException when {@code rateLimit} or {@code ratePeriod} is out of range
     *         (nothing is written)
     * @throws IllegalStateException when this semaphore is configured without a rate here (its
     *         calls carry no window to apply one to)
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     * @throws UnsupportedOperationException when this implementation cannot do it (the default)
     */
    default void overrideRateLimit(int rateLimit, Duration ratePeriod) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot override the rate");
    }

    /**
     * Clears the runtime rate set by {@link #overrideRateLimit(int, Duration)}: each JVM
     * follows its configured rate again (a higher one serves the queue at once). Does nothing when
     * none is set.
     *
     * @throws IllegalStateException when this semaphore is configured without a rate here
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     * @throws UnsupportedOperationException when this implementation cannot do it (the default)
     */
    default void clearRateLimitOverride() {
        throw new UnsupportedOperationException(getClass().getName() + " cannot override the rate");
    }
}
