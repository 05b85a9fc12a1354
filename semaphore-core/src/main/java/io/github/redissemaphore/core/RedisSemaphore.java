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

    /** @return the state in Redis now: limit, usage, holders and waiters in queue order */
    SemaphoreState state();
}
