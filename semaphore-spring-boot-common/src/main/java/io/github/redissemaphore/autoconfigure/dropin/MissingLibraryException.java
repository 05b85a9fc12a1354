package io.github.redissemaphore.autoconfigure.dropin;

/**
 * A drop-in switched on in an application that lacks the library it makes fleet-wide. Stops the
 * start-up: the user asked for a fleet-wide limit and would otherwise run without one.
 */
public final class MissingLibraryException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String property;
    private final String action;

    /**
     * @param property the switch, e.g. {@code distributed-semaphore.resilience4j.enabled}
     * @param missing  what the class path lacks
     * @param action   what to add (or to switch off)
     */
    public MissingLibraryException(String property, String missing, String action) {
        super(property + " is true, but " + missing);
        this.property = property;
        this.action = action;
    }

    /** @return the switch */
    public String property() {
        return property;
    }

    /** @return what to add, or to switch off */
    public String action() {
        return action;
    }
}
