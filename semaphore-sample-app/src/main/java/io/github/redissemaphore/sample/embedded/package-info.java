/**
 * An embedded Redis for the sample, when none is configured.
 */
@NullMarked
package io.github.redissemaphore.sample.embedded;

import org.jspecify.annotations.NullMarked;
