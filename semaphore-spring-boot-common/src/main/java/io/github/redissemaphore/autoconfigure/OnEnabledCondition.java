package io.github.redissemaphore.autoconfigure;

/**
 * Matches unless {@code distributed-semaphore.enabled} is false; a value that is neither true nor
 * false stops the start-up ({@code enabled: flase} must not switch the semaphores off unnoticed).
 * Public for the auto-configuration each starter holds of its own (its health contributor).
 */
public final class OnEnabledCondition extends BoundBooleanCondition {

    OnEnabledCondition() {
        super(DistributedSemaphoreProperties.PREFIX + ".enabled", true);
    }
}
