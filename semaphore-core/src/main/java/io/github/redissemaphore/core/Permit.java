package io.github.redissemaphore.core;

import java.util.function.Consumer;

/**
 * A lease on one or more permits of a {@link RedisSemaphore}. Release it with
 * {@link #release()} or try-with-resources.
 */
public interface Permit extends AutoCloseable {

    /** @return unguessable id of this lease (128 random bits, hex) */
    String id();

    /** @return the semaphore this lease belongs to */
    String semaphoreName();

    /** @return how many permits this lease holds */
    int count();

    /**
     * @return a number strictly greater than that of every earlier grant of the same semaphore,
     *         across all JVMs and restarts; hand it to the protected resource so it can refuse
     *         writes from a holder whose lease was lost
     */
    long fencingToken();

    /** @return false once released, expired or reported lost */
    boolean isHeld();

    /**
     * Registers a listener called once, on a library thread, if the lease is found lost (expired,
     * force-released or wiped from Redis) while it was still held. Called at once if already lost.
     */
    void onLost(Consumer<Permit> listener);

    /** Gives the permits back. Idempotent; never throws: an unreleasable lease expires on its own. */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();
}
