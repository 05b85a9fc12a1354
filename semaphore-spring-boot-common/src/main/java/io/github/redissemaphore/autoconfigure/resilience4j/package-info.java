/**
 * Auto-configuration of the Resilience4j drop-in: with {@code distributed-semaphore.resilience4j.enabled},
 * the application's {@code BulkheadRegistry} holds bulkheads backed by distributed semaphores.
 */
@NullMarked
package io.github.redissemaphore.autoconfigure.resilience4j;

import org.jspecify.annotations.NullMarked;
