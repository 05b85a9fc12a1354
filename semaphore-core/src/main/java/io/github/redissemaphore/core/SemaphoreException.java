package io.github.redissemaphore.core;

import org.jspecify.annotations.Nullable;

/**
 * Base of every unchecked exception the semaphore library throws.
 */
public class SemaphoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public SemaphoreException(String message) {
        super(message);
    }

    public SemaphoreException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
