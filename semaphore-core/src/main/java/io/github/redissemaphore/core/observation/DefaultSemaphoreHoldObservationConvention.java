package io.github.redissemaphore.core.observation;

import io.micrometer.common.KeyValues;

/**
 * The {@code semaphore.hold} observation: a lease from its grant to its end. Key values as
 * {@link DefaultSemaphoreObservationConvention}, with {@code outcome} {@code released} or
 * {@code lost} (renewal found it gone, or it ran out while Redis could not be reached). Its span
 * is named {@code "hold <name>"}.
 */
public class DefaultSemaphoreHoldObservationConvention implements SemaphoreHoldObservationConvention {

    /** The observation's name, also that of the timer a meter handler makes of it. */
    public static final String NAME = "semaphore.hold";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(SemaphoreObservationContext context) {
        return "hold " + context.baseName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(SemaphoreObservationContext context) {
        return SemaphoreKeyValues.low(context);
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(SemaphoreObservationContext context) {
        return SemaphoreKeyValues.high(context);
    }
}
