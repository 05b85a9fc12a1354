package io.github.redissemaphore.concurrencylimit;

import org.springframework.resilience.InvocationRejectedException;

/**
 * Spring's {@link InvocationRejectedException}, as a {@code @ConcurrencyLimit} caller expects it,
 * thrown when the fleet-wide limit refuses a call; it names the semaphore, so a web application
 * answers it with a 429 problem detail naming it ({@link FleetLimitRejectedExceptionHandler}).
 */
public class FleetLimitRejectedException extends InvocationRejectedException {

    private static final long serialVersionUID = 1L;

    private final String semaphoreName;

    /**
     * @param message       Spring's wording, with the semaphore's name
     * @param target        the bean whose method was refused
     * @param semaphoreName the semaphore
     */
    public FleetLimitRejectedException(String message, Object target, String semaphoreName) {
        super(message, target);
        this.semaphoreName = semaphoreName;
    }

    /** @return the semaphore that refused the call */
    public String getSemaphoreName() {
        return semaphoreName;
    }
}
