package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * A lease on one or more permits of a {@link RedisSemaphore}. Release it with
 * {@link #release()} or try-with-resources.
 *
 * <p>Its {@link #id()} is a capability: whoever has it can release the lease or take it over
 * ({@link RedisSemaphore#release(String)}, {@link RedisSemaphore#adopt(String)}), from any JVM.
 * Hand it only to the process meant to finish the work, and do not log it.
 */
public interface Permit extends AutoCloseable {

    /** @return unguessable id of this lease (128 random bits, 22 URL-safe Base64 characters) */
    String id();

    /** @return the semaphore this lease belongs to */
    String semaphoreName();

    /** @return how many permits this lease holds (fewer after {@link #release(int)}) */
    int count();

    /**
     * @return a number strictly greater than that of every earlier grant of the same semaphore,
     *         across all JVMs and restarts; hand it to the protected resource so it can refuse
     *         writes from a holder whose lease was lost. A permit granted locally while Redis
     *         could not be reached ({@link #isLocal()}) has none: it carries 0, which no grant
     *         through Redis does (their tokens are above 0), so a resource that checks tokens
     *         refuses it rather than mistake it for a fleet-wide grant
     */
    long fencingToken();

    /**
     * @return whether this permit was granted by this instance on its own while Redis could not be
     *         reached ({@link WhenUnavailable#LOCAL}, out of its share; or {@link WhenUnavailable#ALLOW},
     *         unguarded); false for every permit Redis granted. It stays true after the permit was
     *         written to Redis on recovery, and its {@link #fencingToken()} stays 0
     */
    default boolean isLocal() {
        return false;
    }

    /** @return false once released, expired or reported lost */
    boolean isHeld();

    /**
     * Registers a listener called once, on a library thread, if the lease is found lost (expired,
     * force-released or wiped from Redis) while it was still held. Called at once if already lost.
     */
    void onLost(Consumer<Permit> listener);

    /**
     * @return how long until the lease ends unless renewed, as this JVM last had it confirmed by
     *         Redis (no Redis call); zero once it is no longer held
     */
    Duration leaseRemaining();

    /**
     * Makes the lease end {@code leaseTime} (100 ms..24 h) from now, by Redis' clock; renewal, when
     * on, goes on by that length from then on. Shorter than what is left is allowed: it ends sooner.
     *
     * @throws IllegalStateException when this JVM no longer holds the lease (released, expired,
     *         lost, or adopted by another process: then {@link #onLost} listeners have run)
     * @throws SemaphoreUnavailableException when Redis did not answer; the lease may or may not
     *         have been extended, and this JVM counts on the shorter of the two until its next renewal
     */
    void extend(Duration leaseTime);

    /**
     * Gives back the permits of this lease. Idempotent; never throws, and never holds its caller
     * for long: while Redis answers, it waits for Redis' reply (at most half a second), so the
     * permits are free for others when it returns; when the library knows Redis is not answering
     * (its connection is down, or a call went unanswered), it returns at once. Either way the
     * release reaches Redis before any call this JVM makes after it; one Redis has not confirmed
     * is sent again in the background until it lands or the lease ends, and
     * {@link SemaphoreListener#releaseDeferred} hears of it. Once another process adopted the
     * lease, this releases nothing: the lease is the adopter's.
     */
    void release();

    /**
     * Gives back {@code permits} of the permits of this lease and keeps the rest, under the same
     * id and fencing token; waiters that now fit are served. {@code permits == count()} is
     * {@link #release()}. Like {@link #release()}, it waits for Redis only briefly and only while
     * Redis answers, and one Redis has not confirmed is sent again in the background.
     *
     * @throws IllegalArgumentException unless {@code 1 <= permits <= count()} (see {@link #count()})
     * @throws IllegalStateException    when this JVM no longer holds the lease (see {@link #extend}),
     *                                  as far as it knows or Redis said while it waited
     */
    void release(int permits);

    /** Same as {@link #release()}. */
    @Override
    void close();
}
