package io.github.redissemaphore.sample.inflight;

import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Counts the calls inside a guarded method body at this moment, across every instance, and the
 * highest count ever seen: the evidence that the semaphore held, measured without asking the
 * semaphore. The counters live in Redis (one INCR/DECR script per entry and exit), so instances in
 * separate processes count together just like two contexts in one JVM.
 *
 * <p>Keys: {@code <distributed-semaphore.key-prefix>:sample:{<name>}:in-flight} and {@code ...:max},
 * one hash tag so that a Redis Cluster runs the script; they expire an hour after the last use.
 */
@Component
public class InFlightCounter {

    /** Long enough to read after a demo, short enough to leave nothing behind for good. */
    private static final String TTL_SECONDS = "3600";

    /** Increments the count and raises the maximum in one step, so no peak slips between two calls. */
    private static final RedisScript<Long> ENTER = RedisScript.of("""
            local now = redis.call('INCR', KEYS[1])
            redis.call('EXPIRE', KEYS[1], ARGV[1])
            if now > tonumber(redis.call('GET', KEYS[2]) or '0') then
              redis.call('SET', KEYS[2], now, 'EX', ARGV[1])
            end
            return now
            """, Long.class);

    private static final RedisScript<Long> EXIT = RedisScript.of("""
            local now = redis.call('DECR', KEYS[1])
            redis.call('EXPIRE', KEYS[1], ARGV[1])
            return now
            """, Long.class);

    private final StringRedisTemplate redis;
    private final String keyPrefix;

    public InFlightCounter(StringRedisTemplate redis,
            @Value("${distributed-semaphore.key-prefix:semaphore}") String semaphoreKeyPrefix) {
        this.redis = redis;
        // Next to the semaphore's own keys, so a demo run with its own prefix counts on its own.
        this.keyPrefix = semaphoreKeyPrefix + ":sample:";
    }

    /**
     * Counts one more call inside {@code name}; close the returned entry when the call leaves.
     *
     * <pre>{@code try (InFlightCounter.Entry entry = inFlight.enter("reports")) { ... } }</pre>
     */
    public Entry enter(String name) {
        List<String> keys = keys(name);
        redis.execute(ENTER, keys, TTL_SECONDS);
        return () -> redis.execute(EXIT, keys, TTL_SECONDS);
    }

    /** @return the calls inside {@code name} now, and the most there ever were at once */
    public InFlight read(String name) {
        List<String> values = redis.opsForValue().multiGet(keys(name));
        return new InFlight(name, asLong(values.get(0)), asLong(values.get(1)));
    }

    /** Forgets the counts of {@code name}. */
    public void reset(String name) {
        redis.delete(keys(name));
    }

    private List<String> keys(String name) {
        String base = keyPrefix + "{" + name + "}:";
        return List.of(base + "in-flight", base + "max");
    }

    private static long asLong(String value) {
        return value == null ? 0 : Long.parseLong(value);
    }

    /** One call inside a counted method body; {@link #close()} when it leaves. */
    @FunctionalInterface
    public interface Entry extends AutoCloseable {

        @Override
        void close();
    }

    /**
     * @param name semaphore whose method bodies are counted
     * @param now  calls inside right now, over every instance
     * @param max  the most calls ever inside at the same time
     */
    public record InFlight(String name, long now, long max) {
    }
}
