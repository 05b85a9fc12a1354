package io.github.redissemaphore.sample.demo;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/** Live counts of finished calls by outcome, read by the progress line while a burst runs. */
final class Tally {

    private final Map<Outcome, AtomicInteger> counts = new EnumMap<>(Outcome.class);

    Tally() {
        for (Outcome outcome : Outcome.values()) {
            counts.put(outcome, new AtomicInteger());
        }
    }

    void record(Call call) {
        counter(call.outcome()).incrementAndGet();
    }

    /** Every outcome has its counter from the start. */
    private AtomicInteger counter(Outcome outcome) {
        return Objects.requireNonNull(counts.get(outcome));
    }

    int count(Outcome outcome) {
        return counter(outcome).get();
    }
}
