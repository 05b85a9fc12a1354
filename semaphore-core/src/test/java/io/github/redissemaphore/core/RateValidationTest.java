package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.redissemaphore.core.internal.redis.Scripts;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Bad rates: {@link SemaphoreSettings} refuses them naming the argument and the allowed values,
 * before anything reaches Redis, and the scripts refuse a bad rate in ARGV 1 with an error reply
 * that leaves every key as it was.
 */
@RedisTest
class RateValidationTest {

    private static final SemaphoreSettings FIVE = SemaphoreSettings.DEFAULTS.withPermits(5);

    private StringRedisTemplate redis;
    private String prefix;

    @BeforeEach
    void connect(RedisServer server) {
        redis = new StringRedisTemplate(server.connectionFactory());
        prefix = server.keyPrefix();
    }

    @Test
    void settingsRefuseABadRateNamingTheArgumentAndTheAllowedValues() {
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(0, Duration.ofMinutes(1)))
                .withMessage("ratePeriod must come with a rateLimit (both or neither), but ratePeriod was 60000 ms and"
                        + " rateLimit 0");
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(-1, Duration.ofMinutes(1)))
                .withMessage("rateLimit must be 0 (no rate) or between 1 and 100000, but was -1");
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(100_001, Duration.ofMinutes(1)))
                .withMessage("rateLimit must be 0 (no rate) or between 1 and 100000, but was 100001");
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(100, Duration.ZERO))
                .withMessage("ratePeriod must be between 100 ms and 24 h (86400000 ms), but was 0 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(100, Duration.ofMillis(99)))
                .withMessage("ratePeriod must be between 100 ms and 24 h (86400000 ms), but was 99 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(100, Duration.ofHours(25)))
                .withMessage("ratePeriod must be between 100 ms and 24 h (86400000 ms), but was 90000000 ms");
        assertThatIllegalArgumentException().isThrownBy(() -> FIVE.withRateLimit(100, null))
                .withMessage("ratePeriod must not be null (Duration.ZERO without a rateLimit)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> FIVE.withTotalPermits(10).withRateLimit(100, Duration.ofMinutes(1)))
                .withMessageStartingWith("rateLimit is not supported with totalPermits (a capped semaphore) yet");
        assertThat(FIVE.withRateLimit(100, Duration.ofMinutes(1)).withRateLimit(0, Duration.ZERO).limitsRate())
                .as("cleared").isFalse();
    }

    @Test
    void theScriptsRefuseABadRateInTheirFirstArgumentAndWriteNothing() {
        // A window of a minute: its key (which expires a period after its newest grant) outlives the calls.
        SemaphoreKeys keys = SemaphoreKeys.of(prefix, "rate-bad").withRate(2, Duration.ofMinutes(1));
        String counts = "1 30000 5000";
        // (a short inbox keeps the state a listpack, whose DUMP only a write changes)
        String box = "j1 owner";
        // A semaphore with a holder, a waiter and a full window, so a bad call has something to break.
        redis.execute(Scripts.load("acquire"), keys.all(), "5 2 60000", "h", counts, box, "3");
        redis.execute(Scripts.load("acquire"), keys.all(), "5 2 60000", "g", counts, box, "3");
        Map<String, String> before = dumps(keys.all());
        List<String> firsts = List.of("5", "5 2", "5 x 1000", "5 0 1000", "5 100001 1000", "5 2 99", "5 2 86400001",
                "5 2 1000 extra", "0 2 1000", "5 -2 1000", "5  2 1000");
        int calls = 0;
        for (String first : firsts) {
            for (String[] args : List.of(new String[] {first, "b", counts, box, "3"}, new String[] {first, "h"},
                    new String[] {first, "w", "1"}, new String[] {first, "30000", "j1", "h"},
                    new String[] {first, "10"}, new String[] {first, "2"})) {
                String script = switch (args.length) {
                    case 5 -> "acquire";
                    case 2 -> args[1].equals("h") ? "release" : args[1].equals("10") ? "state" : "override";
                    case 3 -> "cancel";
                    default -> "renew";
                };
                String call = script + " " + String.join(" | ", args);
                Throwable error = catchThrowable(() -> redis.execute(Scripts.load(script), keys.all(), (Object[]) args));
                assertThat(error).as("%s must be refused", call).isNotNull();
                assertThat(dumps(keys.all())).as("%s wrote nothing", call).isEqualTo(before);
                calls++;
            }
        }
        assertThat(calls).isEqualTo(firsts.size() * 6);
        redis.delete(keys.all());
    }

    private Map<String, String> dumps(List<String> keys) {
        Map<String, String> dumps = new TreeMap<>();
        for (String key : keys) {
            byte[] dump = redis.dump(key);
            if (dump != null) {
                dumps.put(key, HexFormat.of().formatHex(dump));
            }
        }
        return dumps;
    }
}
