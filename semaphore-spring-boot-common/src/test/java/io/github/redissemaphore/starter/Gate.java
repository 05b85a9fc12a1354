package io.github.redissemaphore.starter;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;

/**
 * Holds callers inside a guarded method until the test opens it, so the test can look at a
 * semaphore while permits are certainly held.
 */
public final class Gate {

    private static final Duration LIMIT = Duration.ofSeconds(30);

    private final AtomicInteger entered = new AtomicInteger();
    private final CountDownLatch open = new CountDownLatch(1);

    /** Called inside the guarded method: counts the caller in and waits for {@link #open()}. */
    public void pass() {
        entered.incrementAndGet();
        try {
            if (!open.await(LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until {@code callers} callers are inside. */
    public void awaitEntered(int callers) {
        await().atMost(LIMIT).until(() -> entered.get() >= callers);
    }

    /** @return how many callers came in so far */
    public int entered() {
        return entered.get();
    }

    /** Lets every caller, present and future, through. */
    public void open() {
        open.countDown();
    }
}
