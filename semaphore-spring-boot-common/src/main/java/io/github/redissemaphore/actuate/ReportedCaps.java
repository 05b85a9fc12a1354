package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.SemaphoreListener;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The newest figures Redis reported of each cap over the keys of a capped semaphore, kept in
 * memory for the {@code semaphores} health contributor, which never calls Redis: every reply about
 * a key carries its cap's figures ({@link SemaphoreListener#totalUsageReported}), so they cost no
 * call either. Register it as a listener of the semaphore registry (the starter does, with the
 * health contributor). One entry per capped base name, kept for the life of the registry, as few
 * as the configuration names.
 */
public final class ReportedCaps implements SemaphoreListener {

    private final Map<String, Figures> caps = new ConcurrentHashMap<>();

    @Override
    public void totalUsageReported(String semaphore, int limit, int used, int waiters) {
        caps.put(semaphore, new Figures(limit, used, waiters));
    }

    /** @return the newest figures of each cap heard of, by base name */
    Map<String, Figures> figures() {
        return Map.copyOf(caps);
    }

    /**
     * One cap, all its keys together, fleet-wide.
     *
     * @param limit   the permits all keys together are granted up to (its runtime limit, when set)
     * @param used    permits held
     * @param waiters callers waiting
     */
    record Figures(int limit, int used, int waiters) {
    }
}
