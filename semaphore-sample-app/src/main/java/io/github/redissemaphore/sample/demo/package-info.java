/**
 * The demo: a fleet of clients against the sample, checking that the limit holds.
 */
@NullMarked
package io.github.redissemaphore.sample.demo;

import org.jspecify.annotations.NullMarked;
