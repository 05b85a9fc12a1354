package io.github.redissemaphore.autoconfigure.dropin;

/**
 * One semaphore configured twice with two values: once where the application's annotation or
 * library says it (a Resilience4j property, a {@code @ConcurrencyLimit} attribute) and once under
 * {@code distributed-semaphore.semaphores}. Neither is silently preferred: the fleet would then run
 * with a limit the reader of one of the two places does not expect.
 */
public final class ConflictingLimitException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** What names the value and where it was written. */
    private final String theirs;
    private final String ours;

    /**
     * @param semaphore  the semaphore both configure
     * @param theirs     where the library's value comes from, with the value, e.g.
     *                   {@code resilience4j.bulkhead.instances.reports.max-concurrent-calls = 3}
     * @param ours       the property of ours, with its value, e.g.
     *                   {@code distributed-semaphore.semaphores.reports.permits = 5}
     */
    public ConflictingLimitException(String semaphore, String theirs, String ours) {
        super("Semaphore '" + semaphore + "' is configured twice with different values: " + theirs + ", but " + ours);
        this.theirs = theirs;
        this.ours = ours;
    }

    /** @return where the library's value comes from, with the value */
    public String theirs() {
        return theirs;
    }

    /** @return our property, with its value */
    public String ours() {
        return ours;
    }
}
