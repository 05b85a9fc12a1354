package io.github.redissemaphore.core;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Redis could not be reached, answered with an error, or the registry is shut down. The cause
 * says which.
 */
public class SemaphoreUnavailableException extends SemaphoreException {

    private static final long serialVersionUID = 1L;

    private final @Nullable String semaphoreName;

    public SemaphoreUnavailableException(String message, @Nullable Throwable cause) {
        this(null, message, cause);
    }

    public SemaphoreUnavailableException(String message) {
        this(null, message, null);
    }

    /**
     * @param semaphoreName the semaphore the failed call was for, or null when the failure is not one
     *                      semaphore's (the registry is closed)
     */
    public SemaphoreUnavailableException(@Nullable String semaphoreName, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.semaphoreName = semaphoreName;
    }

    /**
     * @return the semaphore the failed call was for (for a keyed semaphore, with its key:
     *         {@code exports:acme}); empty when the failure is not one semaphore's
     */
    public Optional<String> getSemaphoreName() {
        return Optional.ofNullable(semaphoreName);
    }
}
