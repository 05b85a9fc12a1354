/**
 * Reports: a semaphore guarding a slow call.
 */
@NullMarked
package io.github.redissemaphore.sample.reports;

import org.jspecify.annotations.NullMarked;
