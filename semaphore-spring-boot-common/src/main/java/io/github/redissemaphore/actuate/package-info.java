/**
 * Actuator support: the {@code semaphores} endpoint and health contributor.
 */
@NullMarked
package io.github.redissemaphore.actuate;

import org.jspecify.annotations.NullMarked;
