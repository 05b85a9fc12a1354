package io.github.redissemaphore.core.observation;

import io.micrometer.common.KeyValues;

/**
 * The {@code semaphore.acquire} observation: the wait for a permit, from the call to its answer.
 * Low-cardinality key values {@code name} (the base name of a keyed semaphore) and
 * {@code outcome} ({@code acquired}, {@code rejected}, {@code error}, {@code cancelled}; set when
 * it ends); high-cardinality {@code key} for a keyed semaphore. Its span is named
 * {@code "acquire <name>"}. Extend it to add key values of your own.
 */
public class DefaultSemaphoreObservationConvention implements SemaphoreObservationConvention {

    /** The observation's name, also that of the timer a meter handler makes of it. */
    public static final String NAME = "semaphore.acquire";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(SemaphoreObservationContext context) {
        return "acquire " + context.baseName();
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
