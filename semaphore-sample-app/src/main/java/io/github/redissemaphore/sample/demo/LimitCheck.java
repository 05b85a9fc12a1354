package io.github.redissemaphore.sample.demo;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;

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
     * @return what the calls refused at once were told, in seconds of {@code Retry-After}, and how
     *         many were told each, fewest seconds first; the calls told nothing are not in it
     */
    public Map<Integer, Long> retryAfters() {
        return calls.stream().filter(call -> call.outcome() == Outcome.REFUSED && call.retryAfterSeconds() != null)
                .collect(Collectors.groupingBy(call -> Objects.requireNonNull(call.retryAfterSeconds()), TreeMap::new,
                        Collectors.counting()));
    }

    /** @return the reasons the calls refused at once were given, e.g. "queue-full" */
    public List<String> refusalReasons() {
        return calls.stream().filter(call -> call.outcome() == Outcome.REFUSED).map(Call::detail)
                .filter(Objects::nonNull).distinct().sorted().toList();
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
