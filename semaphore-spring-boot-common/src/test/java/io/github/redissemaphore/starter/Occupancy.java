package io.github.redissemaphore.starter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

import static org.awaitility.Awaitility.await;

/**
 * How many calls are inside a guarded method at once, counted across the instances of a test
 * (they share one JVM). A call inside stays until every caller has started its call, so that a
 * missing limit lets the others in meanwhile and shows in {@link #max()}.
 */
public final class Occupancy {

    private static final Duration LIMIT = Duration.ofSeconds(30);

    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger max = new AtomicInteger();
    private volatile int callers;

    /** The next test starts this many callers (0: nobody waits for anyone). */
    public void expect(int callers) {
        this.callers = callers;
    }

    /** A caller is about to call the guarded method. */
    public void started() {
        started.incrementAndGet();
    }

    /** @return whether every expected caller has started its call */
    public boolean allStarted() {
        return started.get() >= callers;
    }

    /** A call came inside the guarded method. */
    public void enter() {
        max.accumulateAndGet(inside.incrementAndGet(), Math::max);
    }

    /** A call left the guarded method. */
    public void exit() {
        inside.decrementAndGet();
    }

    /**
     * The work of a guarded call that blocks its thread: enters, stays until every caller has
     * started (30 s at most) and 20 ms more, leaves.
     *
     * @return {@code value}
     */
    public <T> T visit(T value) {
        enter();
        try {
            await().atMost(LIMIT).until(this::allStarted);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            return value;
        } finally {
            exit();
        }
    }

    /**
     * Starts {@code callers} asynchronous calls, {@code call.apply(i)} for i from 0, each counted
     * as {@link #started()} just before it is made, then waits for all of them.
     *
     * @return their results, in the order of the calls
     */
    public List<Object> callConcurrently(int callers, IntFunction<CompletableFuture<?>> call) throws Exception {
        expect(callers);
        List<CompletableFuture<?>> calls = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            started();
            calls.add(call.apply(i));
        }
        List<Object> results = new ArrayList<>();
        for (CompletableFuture<?> result : calls) {
            results.add(result.get(LIMIT.toSeconds() * 2, TimeUnit.SECONDS));
        }
        return results;
    }

    /** @return the most calls that were inside at once */
    public int max() {
        return max.get();
    }

    /** @return how many calls are inside now */
    public int inside() {
        return inside.get();
    }
}
