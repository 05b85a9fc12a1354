/**
 * The sample application: a service that uses the starter as a user would.
 */
@NullMarked
package io.github.redissemaphore.sample;

import org.jspecify.annotations.NullMarked;
