package io.github.redissemaphore.sample;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of tests that run the whole sample on a random port against the test support's Redis (never
 * one on 6379), under its key prefix (it may be a REDIS_URL server holding other data; the
 * sample's {@code semaphore} prefix would meet them). Subclasses share one cached context. The embedded fallback is off: its probe runs
 * before dynamic properties exist, so it would only see the default address.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sample.embedded-redis.enabled=false")
public abstract class SharedRedisApplicationTest {

    /** @return the Redis the application runs on */
    protected static RedisServer redis() {
        return RedisServers.shared();
    }

    @DynamicPropertySource
    static void redisProperties(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.url", () -> redis().uri());
        registry.add("distributed-semaphore.key-prefix", () -> redis().keyPrefix());
    }
}
