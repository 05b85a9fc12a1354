/**
 * Payments: a provider's two clauses on one semaphore, at once and per period.
 */
@NullMarked
package io.github.redissemaphore.sample.payments;

import org.jspecify.annotations.NullMarked;
