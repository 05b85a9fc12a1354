package io.github.redissemaphore.sample;

import java.time.Duration;

/**
 * Stands in for the scarce resource the semaphore protects (a heavy query, a third-party API).
 */
public final class SimulatedWork {

    private SimulatedWork() {
    }

    /**
     * Occupies the calling thread for {@code duration}.
     *
     * @throws IllegalStateException when interrupted (the interrupt flag is kept), so that callers
     *                               need no checked exception for a simulation
     */
    public static void perform(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while working", e);
        }
    }
}
