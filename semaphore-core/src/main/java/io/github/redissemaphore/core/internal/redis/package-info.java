/**
 * The Redis protocol of the engine, internal: one type per script (its arguments, and its reply
 * with named fields), {@link io.github.redissemaphore.core.internal.redis.ScriptRunner} (EVALSHA,
 * EVAL on NOSCRIPT, timeouts, errors), {@link io.github.redissemaphore.core.internal.redis.ReplicaWait}
 * (a call, then {@code WAIT}, once {@link io.github.redissemaphore.core.internal.redis.WaitCheck} learnt
 * that the server runs it), {@link io.github.redissemaphore.core.internal.redis.RedisConnections}, and
 * what a server refused, read from its reply ({@link io.github.redissemaphore.core.internal.redis.Refusal})
 * and explained to the caller.
 * No type here is API, and any may change.
 */
@NullMarked
package io.github.redissemaphore.core.internal.redis;

import org.jspecify.annotations.NullMarked;
