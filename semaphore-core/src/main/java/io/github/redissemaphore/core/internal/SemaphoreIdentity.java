package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import org.jspecify.annotations.Nullable;

/**
 * What one semaphore is, fixed when it is made: shared freely by its pieces, as nothing in it changes.
 *
 * @param baseName the name without its key ({@code "exports"} of {@code "exports:acme"}); the name when not keyed
 * @param key      the key of a keyed semaphore, else null: only keyed semaphores are forgotten when idle
 * @param keys     its Redis keys
 * @param settings this JVM's settings of it
 * @param inbox    the channel on which grants of its waiters reach this JVM
 */
record SemaphoreIdentity(String baseName, @Nullable String key, SemaphoreKeys keys, SemaphoreSettings settings,
                         String inbox) {

    String name() {
        return keys.name();
    }

    /** @return this JVM's configured permits, which every script call carries */
    int limit() {
        return settings.permits();
    }
}
