/**
 * The benchmark: this library next to Redisson and a floor of raw Redis calls. Never published.
 */
@NullMarked
package io.github.redissemaphore.bench;

import org.jspecify.annotations.NullMarked;
