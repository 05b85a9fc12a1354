package io.github.redissemaphore.core.observation;

import io.micrometer.observation.Observation;

import org.jspecify.annotations.Nullable;

/**
 * What an observation of one semaphore knows: which semaphore, how many permits, and how it
 * ended. One context serves both observations the engine makes: {@code semaphore.acquire} (the
 * wait for a permit; outcome {@code acquired}, {@code rejected}, {@code error} or
 * {@code cancelled}) and {@code semaphore.hold} (from the grant to the end of the lease; outcome
 * {@code released} or {@code lost}).
 *
 * <p>A keyed semaphore ({@code @DistributedSemaphore(value = "exports", key = "#tenant")}, named
 * {@code "exports:acme"}) has the base name {@code "exports"} and the key {@code "acme"}; any
 * other semaphore has its name as base name and no key.
 */
public class SemaphoreObservationContext extends Observation.Context {

    private final String semaphoreName;
    private final String baseName;
    private final @Nullable String key;
    private final int permits;
    private volatile @Nullable String outcome;

    /**
     * @param semaphoreName the full name ({@code "exports:acme"})
     * @param baseName      the name without the key ({@code "exports"})
     * @param key           the key, or null when the semaphore is not keyed
     * @param permits       how many permits are asked for, or held
     */
    public SemaphoreObservationContext(String semaphoreName, String baseName, @Nullable String key,
                                       int permits) {
        this.semaphoreName = semaphoreName;
        this.baseName = baseName;
        this.key = key;
        this.permits = permits;
    }

    /** @return the full semaphore name, key included */
    public String semaphoreName() {
        return semaphoreName;
    }

    /** @return the name without the key: the same for every key of a keyed semaphore */
    public String baseName() {
        return baseName;
    }

    /** @return the key of a keyed semaphore, or null */
    public @Nullable String key() {
        return key;
    }

    /** @return how many permits the acquisition asks for, or the lease holds */
    public int permits() {
        return permits;
    }

    /** @return how the observed step ended (lower case, see the class comment), or null while it runs */
    public @Nullable String outcome() {
        return outcome;
    }

    /** Set by the engine just before it stops the observation. */
    public void outcome(String outcome) {
        this.outcome = outcome;
    }
}
