package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.Optional;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A separate JVM that joins the queue of a semaphore and waits, to be killed with SIGKILL by a
 * test ({@link WaitingBehaviourTest}, {@link EngineRaceTest}).
 *
 * <p>Arguments: host, port, key prefix, semaphore name, permits, permits to take, lease ms, waiter heartbeat
 * ms, waiter tick ms, wait ms, and optionally max-waiters. Prints {@code waiting} before it asks, then
 * {@code granted} or {@code rejected}, and holds whatever it got until it is killed.
 */
public final class WaiterProcess {

    private WaiterProcess() {
    }

    public static void main(String[] args) throws Exception {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
        factory.afterPropertiesSet();
        factory.start();
        SemaphoreRegistry registry = SemaphoreRegistry.builder(factory).keyPrefix(args[2])
                .waiterHeartbeat(millis(args[7])).waiterTick(millis(args[8])).build();
        RedisSemaphore semaphore = registry.semaphore(args[3], SemaphoreSettings.DEFAULTS
                .withPermits(Integer.parseInt(args[4])).withLeaseTime(millis(args[6]))
                .withMaxWaiters(args.length > 10 ? Integer.parseInt(args[10]) : 0));
        System.out.println("waiting");
        System.out.flush();
        Optional<Permit> permit = semaphore.tryAcquire(Integer.parseInt(args[5]), millis(args[9]));
        System.out.println(permit.isPresent() ? "granted" : "rejected");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    private static Duration millis(String value) {
        return Duration.ofMillis(Long.parseLong(value));
    }
}
