package io.github.redissemaphore.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

/**
 * The observation registry the starter gives the semaphore registry when the application has no
 * {@link ObservationRegistry} of its own but has metrics: it holds a meter handler of the
 * application's meter registry and lets through the {@code semaphore.acquire} observation alone, so
 * that the {@code semaphore.acquire} timer is made the one way it is made everywhere, from the
 * observation, with the same tags. Made by {@link DistributedSemaphoreMetricsAutoConfiguration};
 * a type of its own, not an {@code ObservationRegistry} bean, so the application's context gains no
 * observation registry (Boot's and everyone else's conditions see none, as before).
 */
final class AcquireTimerObservations {

    private final ObservationRegistry registry;

    AcquireTimerObservations(ObservationRegistry registry) {
        this.registry = registry;
    }

    /** @return the observation registry with the meter handler */
    ObservationRegistry registry() {
        return registry;
    }
}
