/**
 * What the two drop-ins share (Resilience4j's semaphore bulkheads and Spring Framework 7's
 * {@code @ConcurrencyLimit}, made fleet-wide): their switches, and the start-up errors of a switch
 * on without its library or of a limit configured twice with two values.
 */
@NullMarked
package io.github.redissemaphore.autoconfigure.dropin;

import org.jspecify.annotations.NullMarked;
