/**
 * The {@code semaphores} health contributor on this Spring Boot line's health API (a package of its
 * own: the starters share {@code io.github.redissemaphore.actuate}, from semaphore-spring-boot-common,
 * and no package is split between two jars).
 */
@NullMarked
package io.github.redissemaphore.actuate.health;

import org.jspecify.annotations.NullMarked;
