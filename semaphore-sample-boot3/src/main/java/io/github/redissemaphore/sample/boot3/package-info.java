/**
 * The demo on Spring Boot 3.5: two instances of a small service guarded by the Boot 3 starter.
 */
@NullMarked
package io.github.redissemaphore.sample.boot3;

import org.jspecify.annotations.NullMarked;
