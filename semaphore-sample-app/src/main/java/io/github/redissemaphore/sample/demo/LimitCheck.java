package io.github.redissemaphore.sample.demo;

import java.util.List;

/**
 * What a burst at one semaphore produced, against its limit.
 *
 * @param semaphore  as shown in the table
 * @param permits    the configured limit
 * @param maxInside  the most calls inside the method at the same time, across all instances,
 *                   counted by the sample itself (not by the library)
 * @param calls      each call's result
 */
public record LimitCheck(String semaphore, int permits, long maxInside, List<Call> calls) {

    public LimitCheck {
        calls = List.copyOf(calls);
    }

    /** @return whether the limit held: never more calls inside than permits */
    public boolean held() {
        return maxInside <= permits;
    }

    /** @return how many calls were made */
    public int total() {
        return calls.size();
    }

    /** @return how many calls ended with {@code outcome} */
    public int count(Outcome outcome) {
        return (int) calls.stream().filter(call -> call.outcome() == outcome).count();
    }

    /**
     * @param percent 0..100
     * @return the wait of served calls at that percentile (nearest rank), 0 when none was served
     */
    public long waitPercentile(double percent) {
        long[] waits = calls.stream().filter(call -> call.outcome() == Outcome.SERVED)
                .mapToLong(Call::waitedMillis).sorted().toArray();
        if (waits.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(percent / 100 * waits.length);
        return waits[Math.max(0, rank - 1)];
    }
}
