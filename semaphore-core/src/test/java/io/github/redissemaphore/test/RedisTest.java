package io.github.redissemaphore.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that runs against Redis: {@link RedisServer} and {@link RedisCluster}
 * parameters of its constructor, test and lifecycle methods are resolved by {@link RedisExtension}.
 *
 * <pre>{@code
 * @RedisTest
 * class MyTest {
 *     @Test
 *     void works(RedisServer server) {            // shared by the class: maybe REDIS_URL's
 *         RedisConnectionFactory jvm1 = server.connectionFactory();
 *         SemaphoreRegistry.builder(jvm1).keyPrefix(server.keyPrefix()); // its keys only, deleted before each test
 *     }
 *
 *     @Test
 *     void outage(@Dedicated RedisServer server) { // a process of its own: stop(), start(), kill(), pause()...
 *         server.stop();
 *     }
 * }
 * }</pre>
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@ExtendWith(RedisExtension.class)
public @interface RedisTest {
}
