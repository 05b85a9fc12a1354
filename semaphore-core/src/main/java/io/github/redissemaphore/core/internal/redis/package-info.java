/**
 * The Redis protocol of the engine, internal: one type per script (its arguments, and its reply
 * with named fields), {@link io.github.redissemaphore.core.internal.redis.ScriptRunner} (EVALSHA,
 * EVAL on NOSCRIPT, timeouts, errors), {@link io.github.redissemaphore.core.internal.redis.ReplicaWait}
 * (a call, then {@code WAIT}) and {@link io.github.redissemaphore.core.internal.redis.RedisConnections}.
 * No type here is API, and any may change.
 */
@NullMarked
package io.github.redissemaphore.core.internal.redis;

import org.jspecify.annotations.NullMarked;
