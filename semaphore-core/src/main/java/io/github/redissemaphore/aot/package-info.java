/**
 * Hints for GraalVM native images and Spring's AOT processing: the Lua scripts stay in the image.
 */
@NullMarked
package io.github.redissemaphore.aot;

import org.jspecify.annotations.NullMarked;
