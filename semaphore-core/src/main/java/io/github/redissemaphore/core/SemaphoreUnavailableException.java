package io.github.redissemaphore.core;

import org.jspecify.annotations.Nullable;

/**
 * Redis could not be reached, answered with an error, or the registry is shut down. The cause
 * says which.
 */
public class SemaphoreUnavailableException extends SemaphoreException {

    private static final long serialVersionUID = 1L;

    public SemaphoreUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    public SemaphoreUnavailableException(String message) {
        super(message);
    }
}
