/**
 * Auto-configuration of the {@code @ConcurrencyLimit} drop-in (Spring Framework 7, Boot 4 starter).
 */
@NullMarked
package io.github.redissemaphore.autoconfigure.concurrencylimit;

import org.jspecify.annotations.NullMarked;
