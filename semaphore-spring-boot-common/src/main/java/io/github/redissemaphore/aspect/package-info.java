/**
 * The aspect behind {@code @DistributedSemaphore}: one guard per kind of return type.
 */
@NullMarked
package io.github.redissemaphore.aspect;

import org.jspecify.annotations.NullMarked;
