package io.github.redissemaphore.core;

/**
 * What a name stands for in a {@link SemaphoreRegistry}, as {@link SemaphoreRegistry#lookup(String)}
 * reads it, once: a semaphore, the cap of a capped semaphore's keys, or nothing this registry
 * knows. A caller that addresses semaphores by name (an operator's endpoint, a test) switches on
 * it instead of taking the name apart itself.
 */
public sealed interface SemaphoreLookup {

    /** @return the name looked up */
    String name();

    /**
     * A semaphore: used in this JVM, configured by that name, or a key of a configured cap.
     *
     * @param semaphore the semaphore the name stands for
     */
    record Found(RedisSemaphore semaphore) implements SemaphoreLookup {

        @Override
        public String name() {
            return semaphore.name();
        }
    }

    /**
     * The base name of a capped semaphore ({@link SemaphoreSettings#totalPermits()}): the cap over
     * all its keys, whose semaphores are {@link SemaphoreCap#semaphore(String)}.
     *
     * @param cap the cap the name stands for
     */
    record Capped(SemaphoreCap cap) implements SemaphoreLookup {

        @Override
        public String name() {
            return cap.name();
        }
    }

    /**
     * Nothing this registry knows by that name: not used in this JVM, not configured, not a key of
     * a configured cap (or not a valid name at all). Looking it up made nothing.
     *
     * @param name the name looked up
     */
    record Unknown(String name) implements SemaphoreLookup {
    }
}
