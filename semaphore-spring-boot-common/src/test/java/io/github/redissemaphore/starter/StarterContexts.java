package io.github.redissemaphore.starter;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreEndpointAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreMetricsAutoConfiguration;
import io.github.redissemaphore.test.RedisServer;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Application contexts as an application with the starter gets them: Boot's Redis and AOP
 * auto-configuration plus the shared ones of ours (a starter's own, such as its health contributor, are
 * added by the tests of that starter), on a real Redis, with the server's {@link RedisServer#keyPrefix()
 * key prefix} (it may be a REDIS_URL server holding other data). Each runner is one "application":
 * run it twice for two instances sharing the Redis.
 */
public final class StarterContexts {

    private StarterContexts() {
    }

    /** @return a runner whose contexts use {@code server} and its key prefix, with quick waiter ticks for tests */
    public static ApplicationContextRunner on(RedisServer server) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BootLine.REDIS_AUTO_CONFIGURATION, AopAutoConfiguration.class,
                        DistributedSemaphoreAutoConfiguration.class,
                        DistributedSemaphoreMetricsAutoConfiguration.class,
                        DistributedSemaphoreEndpointAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=" + server.uri(),
                        "distributed-semaphore.key-prefix=" + server.keyPrefix(),
                        "distributed-semaphore.waiter-tick=200ms",
                        "distributed-semaphore.waiter-heartbeat=2s");
    }
}
