package io.github.redissemaphore.sample;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of tests that run the whole sample on a random port against the test support's Redis (never
 * one on 6379). Subclasses share one cached context. The embedded fallback is off: its probe runs
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
    }
}
