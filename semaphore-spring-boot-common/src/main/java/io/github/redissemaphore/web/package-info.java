/**
 * Web support: the problem details a refused or unavailable semaphore answers with, for MVC and
 * WebFlux alike.
 */
@NullMarked
package io.github.redissemaphore.web;

import org.jspecify.annotations.NullMarked;
