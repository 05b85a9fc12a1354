/**
 * The live view: holders, waiters and instances of the fleet, read through the public API.
 */
@NullMarked
package io.github.redissemaphore.sample.live;

import org.jspecify.annotations.NullMarked;
