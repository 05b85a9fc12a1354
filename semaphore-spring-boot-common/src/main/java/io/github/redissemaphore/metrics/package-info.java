/**
 * Micrometer metrics of the semaphores, from what the scripts already return.
 */
@NullMarked
package io.github.redissemaphore.metrics;

import org.jspecify.annotations.NullMarked;
