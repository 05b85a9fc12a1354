/**
 * The public API: {@link io.github.redissemaphore.core.SemaphoreRegistry} hands out
 * {@link io.github.redissemaphore.core.RedisSemaphore}s, whose {@link io.github.redissemaphore.core.Permit}s
 * are leases in Redis. What this JVM holds and waits for is read with
 * {@link io.github.redissemaphore.core.RedisSemaphore#localState()}, the fleet-wide state with
 * {@link io.github.redissemaphore.core.RedisSemaphore#state()}. Nothing here may be null unless marked
 * {@code @Nullable}.
 */
@NullMarked
package io.github.redissemaphore.core;

import org.jspecify.annotations.NullMarked;
