/**
 * Counts the calls inside a guarded method across every instance: evidence that the limit held,
 * measured without asking the semaphore.
 */
@NullMarked
package io.github.redissemaphore.sample.inflight;

import org.jspecify.annotations.NullMarked;
