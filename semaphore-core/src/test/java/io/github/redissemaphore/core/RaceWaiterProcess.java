package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.Optional;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A separate JVM that joins the queue of a semaphore and waits, to be killed with SIGKILL by
 * {@link EngineRaceTest}. Unlike {@link WaiterProcess} every timing is an argument, so the test can
 * run it with the registry defaults.
 *
 * <p>Arguments: host, port, semaphore name, permits, lease ms, waiter heartbeat ms, waiter tick ms,
 * wait ms. Prints {@code waiting} before it asks, then {@code granted} or {@code rejected}.
 */
public final class RaceWaiterProcess {

    private RaceWaiterProcess() {
    }

    public static void main(String[] args) throws Exception {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
        factory.afterPropertiesSet();
        factory.start();
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory)
                .waiterHeartbeat(Duration.ofMillis(Long.parseLong(args[5])))
                .waiterTick(Duration.ofMillis(Long.parseLong(args[6])))
                .build();
        RedisSemaphore semaphore = registry.semaphore(args[2], SemaphoreSettings.DEFAULTS
                .withPermits(Integer.parseInt(args[3])).withLeaseTime(Duration.ofMillis(Long.parseLong(args[4]))));
        System.out.println("waiting");
        System.out.flush();
        Optional<Permit> permit = semaphore.tryAcquire(Duration.ofMillis(Long.parseLong(args[7])));
        System.out.println(permit.isPresent() ? "granted" : "rejected");
        System.out.flush();
        // Holds whatever it got until it is killed.
        Thread.sleep(Long.MAX_VALUE);
    }
}
