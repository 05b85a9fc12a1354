/**
 * Resilience4j's semaphore {@code Bulkhead}, backed by a distributed semaphore of the same name: the
 * bulkheads that {@code distributed-semaphore.resilience4j.enabled} puts in the application's
 * {@code BulkheadRegistry}, so that {@code @Bulkhead}, Resilience4j's properties, events and meters
 * keep working and the limit holds across the fleet.
 */
@NullMarked
package io.github.redissemaphore.resilience4j;

import org.jspecify.annotations.NullMarked;
