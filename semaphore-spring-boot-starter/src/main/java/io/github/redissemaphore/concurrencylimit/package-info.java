/**
 * Spring Framework 7's {@code @ConcurrencyLimit}, fleet-wide: with
 * {@code distributed-semaphore.concurrency-limit.enabled}, every annotated method (or class) is
 * guarded by a distributed semaphore instead of Spring's per-JVM throttle.
 */
@NullMarked
package io.github.redissemaphore.concurrencylimit;

import org.jspecify.annotations.NullMarked;
