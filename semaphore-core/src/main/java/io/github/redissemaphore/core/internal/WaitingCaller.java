package io.github.redissemaphore.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The thread of a caller that awaits its acquisition ({@code tryAcquire}, {@code acquire}), as the
 * executor of that acquisition's first reply: the reply is handled by the caller itself while it
 * waits, as gRPC's {@code ThreadlessExecutor} runs a blocking call's callbacks. A synchronous
 * acquire thus takes the asynchronous path, awaited, without a hand-off between two threads per
 * call (the callbacks' pool, then the caller). Once the caller stops waiting (its permit, its
 * exception, an interrupt), what is left or comes later runs on {@code fallback}: a task is never
 * lost, and never run twice.
 */
final class WaitingCaller implements Executor {

    /** Wakes the caller when its acquisition completes; nothing to run once it stopped waiting. */
    private static final Runnable WAKE = () -> { };

    private final Executor fallback;
    private final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
    private volatile boolean waiting = true;

    WaitingCaller(Executor fallback) {
        this.fallback = fallback;
    }

    @Override
    public void execute(Runnable task) {
        if (!waiting) {
            handOn(task);
            return;
        }
        tasks.add(task);
        // The caller may have stopped waiting since the check: whoever takes the task out runs it.
        if (!waiting && tasks.remove(task)) {
            handOn(task);
        }
    }

    /**
     * Runs the tasks handed here, on the caller's thread, until {@code done} completes; then, or
     * on an interrupt, hands whatever comes later to the fallback.
     *
     * @throws InterruptedException when the caller was interrupted first
     */
    void runUntil(CompletableFuture<?> done) throws InterruptedException {
        // Its completion wakes the loop, whichever thread completes it.
        done.whenComplete((value, error) -> execute(WAKE));
        try {
            while (!done.isDone()) {
                tasks.take().run();
            }
        } finally {
            waiting = false;
            for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                handOn(task);
            }
        }
    }

    private void handOn(Runnable task) {
        if (task != WAKE) {
            fallback.execute(task);
        }
    }
}
