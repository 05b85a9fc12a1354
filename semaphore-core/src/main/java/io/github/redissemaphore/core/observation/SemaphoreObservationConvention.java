package io.github.redissemaphore.core.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names the {@code semaphore.acquire} observation and its key values. Replace
 * {@link DefaultSemaphoreObservationConvention} with your own through
 * {@code SemaphoreRegistry.Builder#observationConvention}, or, with the Spring Boot starter, a bean
 * of this type.
 */
public interface SemaphoreObservationConvention extends ObservationConvention<SemaphoreObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof SemaphoreObservationContext;
    }
}
