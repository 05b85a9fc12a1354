/**
 * Auto-configuration of the {@code semaphores} health contributor for this Spring Boot line (the rest
 * of the auto-configuration is in {@code io.github.redissemaphore.autoconfigure}, shared by the starters).
 */
@NullMarked
package io.github.redissemaphore.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
