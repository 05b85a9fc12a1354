package io.github.redissemaphore.core.internal;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The keys of each capped semaphore in degraded mode, as one family: its lock is the lock of
 * every key's {@link DegradedMode}, so a local grant checks the key's share and the cap's in one
 * step, and the cap's use is the sum of its keys'.
 */
final class LocalCaps {

    /** The degraded modes of one capped semaphore's keys in this JVM. */
    static final class Family {

        /** The lock of every key's degraded mode. */
        final ReentrantLock lock = new ReentrantLock();
        private final Set<DegradedMode> keys = ConcurrentHashMap.newKeySet();

        /** Under this family's lock: the permits of all its keys this JVM holds, through Redis or not. */
        int inside() {
            int inside = 0;
            for (DegradedMode key : keys) {
                inside += key.inside();
            }
            return inside;
        }

        void leave(DegradedMode key) {
            keys.remove(key);
        }
    }

    private final Map<String, Family> families = new ConcurrentHashMap<>();

    /** @return the family of {@code baseName}, which {@code key} joins */
    Family family(String baseName, DegradedMode key) {
        Family family = families.computeIfAbsent(baseName, name -> new Family());
        family.keys.add(key);
        return family;
    }
}
