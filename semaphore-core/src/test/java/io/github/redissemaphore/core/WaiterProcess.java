package io.github.redissemaphore.core;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A separate JVM that joins the queue of a semaphore and waits, to be killed with SIGKILL by
 * {@link WaitingBehaviourTest}. Arguments: host, port, semaphore name, permits, count.
 */
public final class WaiterProcess {

    private WaiterProcess() {
    }

    public static void main(String[] args) throws Exception {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
        factory.afterPropertiesSet();
        factory.start();
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory)
                .waiterTick(Duration.ofMillis(200)).waiterHeartbeat(Duration.ofSeconds(2)).build();
        RedisSemaphore semaphore = registry.semaphore(args[2],
                SemaphoreSettings.DEFAULTS.withPermits(Integer.parseInt(args[3])));
        System.out.println("waiting");
        semaphore.tryAcquire(Integer.parseInt(args[4]), Duration.ofMinutes(5));
    }
}
