package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * What the rate costs in Redis: the commands the scripts run for one uncontended acquire/release
 * pair with a rate next to one without (MONITOR's script lines), and the memory of a full window
 * ({@code MEMORY USAGE}) at rate-limit 100 and 10,000. Each figure is printed and bounded, so a
 * change that makes the rate dearer fails here.
 */
@RedisTest
class RateCostTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    private static final String INBOX = "inbox-cost";

    private RedisServer server;
    private RawScripts scripts;
    private StringRedisTemplate redis;
    private String prefix;

    @BeforeEach
    void connect(RedisServer server) {
        this.server = server;
        this.scripts = new RawScripts(server.connectionFactory(RawScripts.TIMEOUT));
        this.redis = new StringRedisTemplate(server.connectionFactory());
        this.prefix = server.keyPrefix();
        warm(scripts, prefix);
    }

    /**
     * The first call of a test JVM also makes its connection, on a pool that test classes running
     * side by side on a loaded machine may keep busy past the call's 2 s: it is made until it lands.
     */
    static void warm(RawScripts scripts, String prefix) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> scripts.state(SemaphoreKeys.of(prefix, "warm"), 1, 1) != null);
    }

    @Test
    void anUncontendedPairWithARateRunsAFewCommandsMoreThanOneWithout() throws Exception {
        Map<String, Integer> plain = pairCommands(SemaphoreKeys.of(prefix, "cost-plain"));
        Map<String, Integer> rated = pairCommands(SemaphoreKeys.of(prefix, "cost-rated")
                .withRate(100, Duration.ofMinutes(1)));
        int plainTotal = plain.values().stream().mapToInt(Integer::intValue).sum();
        int ratedTotal = rated.values().stream().mapToInt(Integer::intValue).sum();
        System.out.printf("script commands of an uncontended acquire/release pair: without a rate %d %s, with a"
                + " rate %d %s%n", plainTotal, plain, ratedTotal, rated);
        assertThat(plainTotal).as("the usual pair, as acquire.lua and release.lua say (4 + 5)").isEqualTo(9);
        // acquire's general path (TIME HMGET, LLEN RPUSH, ZADD HSET, PEXPIREAT x2 for the window and keys), and
        // release's short path as without a rate
        assertThat(ratedTotal).as("the pair with a rate").isLessThanOrEqualTo(plainTotal + 5);
        assertThat(rated).containsKeys("LLEN", "RPUSH");
    }

    @Test
    void aFullWindowTakesAboutTwelveBytesAGrant() {
        for (int limit : List.of(100, 10_000)) {
            SemaphoreKeys keys = SemaphoreKeys.of(prefix, "window-" + limit).withRate(limit, Duration.ofHours(1));
            for (int i = 0; i < limit; i++) {
                Acquired granted = scripts.acquire(keys, 1, "p" + i, 1, LEASE, false, true, HEARTBEAT, INBOX, "cost");
                assertThat(granted.status()).isEqualTo(Acquired.Status.GRANTED);
                scripts.release(keys, 1, "p" + i);
            }
            assertThat(scripts.acquire(keys, 1, "over", 1, LEASE, false, true, HEARTBEAT, INBOX, "cost").status())
                    .as("the window is full").isEqualTo(Acquired.Status.RATE_LIMITED);
            String window = keys.all().get(3);
            long bytes = memoryUsage(window);
            System.out.printf("a full window of rate-limit %d: MEMORY USAGE %d bytes (%.1f a grant)%n", limit, bytes,
                    bytes / (double) limit);
            assertThat(redis.opsForList().size(window)).isEqualTo(limit);
            assertThat(bytes).as("memory of a full window of %s", limit).isLessThan(200L + 16L * limit);
            redis.delete(keys.all());
        }
    }

    private Map<String, Integer> pairCommands(SemaphoreKeys keys) throws Exception {
        // One pair first, so the pair measured finds the keys as a busy semaphore does (and the scripts loaded).
        scripts.acquire(keys, 5, "warm", 1, LEASE, false, true, HEARTBEAT, INBOX, "cost");
        scripts.release(keys, 5, "warm", 0, INBOX);
        List<String> lines;
        try (CommandMonitor monitor = new CommandMonitor(server.host(), server.port())) {
            lines = CommandMonitor.scriptCommandsDuring(List.of(monitor), () -> {
                scripts.acquire(keys, 5, "measured", 1, LEASE, false, true, HEARTBEAT, INBOX, "cost");
                scripts.release(keys, 5, "measured", 0, INBOX);
            });
        }
        Map<String, Integer> counts = new TreeMap<>();
        for (String line : lines) {
            // MONITOR: 1700000000.123456 [0 lua] "COMMAND" "arg" ...
            int quote = line.indexOf('"');
            String command = line.substring(quote + 1, line.indexOf('"', quote + 1)).toUpperCase();
            counts.merge(command, 1, Integer::sum);
        }
        return counts;
    }

    private long memoryUsage(String key) {
        Long bytes = redis.execute(RedisScript.of("return redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', '0')",
                Long.class), List.of(key));
        return bytes == null ? -1 : bytes;
    }
}
