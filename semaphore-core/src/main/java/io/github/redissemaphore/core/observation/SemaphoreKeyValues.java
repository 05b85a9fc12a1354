package io.github.redissemaphore.core.observation;

import io.micrometer.common.KeyValues;

/** The key values both default conventions give, written once. */
final class SemaphoreKeyValues {

    /** Low cardinality: the base name, never the key. */
    static final String NAME = "name";
    /** Low cardinality: how it ended; absent while it runs, so a long-task timer has no placeholder tag. */
    static final String OUTCOME = "outcome";
    /** High cardinality (spans only, never a meter tag): the key of a keyed semaphore. */
    static final String KEY = "key";

    private SemaphoreKeyValues() {
    }

    static KeyValues low(SemaphoreObservationContext context) {
        KeyValues values = KeyValues.of(NAME, context.baseName());
        String outcome = context.outcome();
        return outcome == null ? values : values.and(OUTCOME, outcome);
    }

    static KeyValues high(SemaphoreObservationContext context) {
        return context.key() == null ? KeyValues.empty() : KeyValues.of(KEY, context.key());
    }
}
