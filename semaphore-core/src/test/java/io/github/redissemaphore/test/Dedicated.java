package io.github.redissemaphore.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a {@link RedisServer} (or {@link RedisCluster}) parameter of a {@link RedisTest} class: a fresh
 * one for this test alone instead of the class's shared one, closed after the test.
 *
 * <p>A dedicated server is always a process started by the test support (never REDIS_URL or
 * Docker), so it is {@link RedisServer#managed() managed}: the test may stop, restart or kill it.
 *
 * <pre>{@code
 * @Test
 * void survivesARestart(@Dedicated RedisServer server) {
 *     server.stop();
 *     server.start();
 * }
 * }</pre>
 *
 * On a constructor or lifecycle-method parameter it lives as long as the JUnit context the
 * parameter was resolved in.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface Dedicated {
}
