/**
 * Per-tenant exports: a keyed semaphore.
 */
@NullMarked
package io.github.redissemaphore.sample.exports;

import org.jspecify.annotations.NullMarked;
