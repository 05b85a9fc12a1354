package io.github.redissemaphore.core;

import java.time.Duration;

/**
 * No permit could be had within the allowed wait.
 */
public class SemaphoreRejectedException extends SemaphoreException {

    private static final long serialVersionUID = 1L;

    private final String semaphoreName;
    private final int requestedPermits;
    private final Duration waited;

    public SemaphoreRejectedException(String semaphoreName, int requestedPermits, Duration waited) {
        super("No permit of semaphore '" + semaphoreName + "' for " + requestedPermits
                + " permit(s) within " + waited.toMillis() + " ms");
        this.semaphoreName = semaphoreName;
        this.requestedPermits = requestedPermits;
        this.waited = waited;
    }

    /** @return the semaphore that refused */
    public String getSemaphoreName() {
        return semaphoreName;
    }

    /** @return how many permits were asked for */
    public int getRequestedPermits() {
        return requestedPermits;
    }

    /** @return how long the caller was allowed to wait */
    public Duration getWaited() {
        return waited;
    }
}
