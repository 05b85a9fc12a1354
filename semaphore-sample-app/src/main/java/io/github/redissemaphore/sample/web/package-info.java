/**
 * Turns the semaphore's refusals into HTTP answers (429, 503) a client can act on.
 */
@NullMarked
package io.github.redissemaphore.sample.web;

import org.jspecify.annotations.NullMarked;
