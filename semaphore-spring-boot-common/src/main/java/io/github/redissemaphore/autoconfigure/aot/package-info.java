/**
 * AOT processing and native-image hints of the starter.
 */
@NullMarked
package io.github.redissemaphore.autoconfigure.aot;

import org.jspecify.annotations.NullMarked;
