package io.github.redissemaphore.aspect;

import java.util.HashSet;
import java.util.Set;

/**
 * The semaphores the current thread holds a permit of through the aspect, so that a guarded
 * method called from another one on the same semaphore runs on the outer call's permit instead
 * of waiting for a second one (with one permit it would wait for itself).
 */
final class ThreadHolds {

    private final ThreadLocal<Set<String>> held = new ThreadLocal<>();

    /** @return whether this thread is already inside a guarded call of semaphore {@code name} */
    boolean holds(String name) {
        Set<String> names = held.get();
        return names != null && names.contains(name);
    }

    /** This thread now runs on a permit of {@code name}. */
    void enter(String name) {
        Set<String> names = held.get();
        if (names == null) {
            names = new HashSet<>(4);
            held.set(names);
        }
        names.add(name);
    }

    /** The outermost guarded call of {@code name} on this thread is over. */
    void exit(String name) {
        Set<String> names = held.get();
        if (names != null) {
            names.remove(name);
            if (names.isEmpty()) {
                // pooled threads live long: leave nothing behind
                held.remove();
            }
        }
    }
}
