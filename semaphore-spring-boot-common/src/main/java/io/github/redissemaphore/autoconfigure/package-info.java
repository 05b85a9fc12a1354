/**
 * Spring Boot auto-configuration of the semaphores, from {@code distributed-semaphore.*} properties.
 */
@NullMarked
package io.github.redissemaphore.autoconfigure;

import org.jspecify.annotations.NullMarked;
