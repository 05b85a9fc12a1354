package io.github.redissemaphore.starter;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.awaitility.Awaitility.await;

/**
 * Counts the calls inside a guarded method, independently of any limiter, across every application
 * context of the test (they share this JVM): the most inside at once is what the backend would see.
 */
public final class Witness {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final int overlap;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger max = new AtomicInteger();
    private final AtomicInteger calls = new AtomicInteger();

    /**
     * @param overlap how many calls each call waits to have been inside at once before it leaves: the
     *                most the limiters under test let in, so the maximum is sure to reach it, and one
     *                caller slipping in beyond it would push the maximum higher
     */
    public Witness(int overlap) {
        this.overlap = overlap;
    }

    /** Called first thing inside the method. */
    public void enter() {
        calls.incrementAndGet();
        max.accumulateAndGet(inside.incrementAndGet(), Math::max);
    }

    /** Stays inside until {@code overlap} calls have been inside at once. */
    public void stay() {
        await().atMost(PATIENCE).until(() -> max.get() >= overlap);
        LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
    }

    /** Called last thing inside the method (before an asynchronous result completes). */
    public void exit() {
        inside.decrementAndGet();
    }

    /** @return the most calls inside at once so far */
    public int max() {
        return max.get();
    }

    /** @return how many calls came in */
    public int calls() {
        return calls.get();
    }
}
