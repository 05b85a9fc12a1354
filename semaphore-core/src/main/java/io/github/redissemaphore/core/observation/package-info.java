/**
 * Micrometer observations of the semaphores: {@code semaphore.acquire} (the wait) and
 * {@code semaphore.hold} (the lease), their context and their replaceable conventions. Given an
 * {@code ObservationRegistry} ({@code SemaphoreRegistry.Builder#observationRegistry}), the engine
 * makes both for every acquisition, through the plain API as through the annotation. Neither is
 * ever put in scope: no other span (a Redis command's, the guarded method's) nests under them.
 */
@NullMarked
package io.github.redissemaphore.core.observation;

import org.jspecify.annotations.NullMarked;
