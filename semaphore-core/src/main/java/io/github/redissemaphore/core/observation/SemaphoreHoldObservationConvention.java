package io.github.redissemaphore.core.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names the {@code semaphore.hold} observation and its key values. Replace
 * {@link DefaultSemaphoreHoldObservationConvention} with your own through
 * {@code SemaphoreRegistry.Builder#holdObservationConvention}, or, with the Spring Boot starter, a
 * bean of this type.
 */
public interface SemaphoreHoldObservationConvention extends ObservationConvention<SemaphoreObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof SemaphoreObservationContext;
    }
}
