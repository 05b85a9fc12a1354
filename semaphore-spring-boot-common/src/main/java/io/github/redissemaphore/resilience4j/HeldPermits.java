package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.core.Permit;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.jspecify.annotations.Nullable;

/**
 * The permits one bulkhead holds in this JVM, for the calls that entered it and have not finished.
 *
 * <p>Resilience4j's {@code Bulkhead} hands its caller no permit: {@code acquirePermission()} returns
 * nothing and {@code onComplete()} takes nothing, and the two may run on different threads
 * ({@code decorateCompletionStage} completes on the thread that completes the stage, Reactor's
 * operator on the thread of the terminal signal). So the permits are kept here, one queue per
 * bulkhead and JVM, not per thread: {@code onComplete()} releases the oldest one, whichever thread
 * calls it. That is exact because the permits of one bulkhead are interchangeable: each is one permit
 * of the same semaphore, leased by this JVM for the same time and renewed by the same tick, and the
 * caller cannot see which it got (no fencing token reaches a Resilience4j caller). Resilience4j's own
 * bulkhead does the same with a {@code java.util.concurrent.Semaphore}: a release gives back "a"
 * permit, not "the" permit. A per-thread queue would lose the permits of every asynchronous call
 * (acquired on one thread, completed on another) and keep a reference to them on a pooled thread.
 */
final class HeldPermits {

    private final Queue<Permit> permits = new ConcurrentLinkedQueue<>();

    /** Keeps a permit just granted to a call. */
    void add(Permit permit) {
        permits.add(permit);
    }

    /**
     * Releases one permit for a call that finished (or gave up its permission).
     *
     * @return whether there was one: false when more calls finished than entered
     */
    boolean releaseOne() {
        @Nullable Permit permit = permits.poll();
        if (permit == null) {
            return false;
        }
        permit.release();
        return true;
    }

    /** @return how many this JVM holds */
    int size() {
        return permits.size();
    }
}
