/**
 * The {@code @DistributedSemaphore} annotation: which calls take a permit of which semaphore.
 */
@NullMarked
package io.github.redissemaphore.annotation;

import org.jspecify.annotations.NullMarked;
