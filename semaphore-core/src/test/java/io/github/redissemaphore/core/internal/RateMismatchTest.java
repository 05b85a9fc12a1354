package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * JVMs configured with other rates for one semaphore, or one with a rate and one without, on a real
 * Redis: each JVM warns once per other rate it meets, naming both, and JVMs that agree say
 * nothing.
 */
@RedisTest
class RateMismatchTest {

    private final RedisServer server;
    private final List<SemaphoreRegistry> registries = new ArrayList<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(DefaultRedisSemaphore.class);
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final String name = "payments-" + UUID.randomUUID().toString().substring(0, 8);
    /** The end of every rate mismatch's warning: the way out that needs no redeploy. */
    private final String orARuntimeRate = ", or set a runtime rate that every JVM with a rate follows"
            + " (RedisSemaphore.overrideRateLimit, or POST /actuator/semaphores/" + name + " with"
            + " {\"rateLimit\": N, \"ratePeriod\": \"1m\"})";

    RateMismatchTest(RedisServer server) {
        this.server = server;
    }

    @BeforeEach
    void captureWarnings() {
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void close() {
        logger.detachAppender(logs);
        registries.forEach(SemaphoreRegistry::close);
    }

    @Test
    void eachJvmWarnsOncePerOtherRateAndJvmsThatAgreeSayNothing() {
        RedisSemaphore hundred = jvm(SemaphoreSettings.DEFAULTS.withPermits(5).withRateLimit(100, Duration.ofMinutes(1)));
        RedisSemaphore sameHundred = jvm(SemaphoreSettings.DEFAULTS.withPermits(5)
                .withRateLimit(100, Duration.ofMinutes(1)));
        for (int i = 0; i < 3; i++) {
            hundred.state();
            sameHundred.state();
        }
        assertThat(warnings()).as("JVMs that agree").isEmpty();

        RedisSemaphore fifty = jvm(SemaphoreSettings.DEFAULTS.withPermits(5).withRateLimit(50, Duration.ofMinutes(1)));
        RedisSemaphore none = jvm(SemaphoreSettings.DEFAULTS.withPermits(5));
        for (int i = 0; i < 3; i++) {
            hundred.state();
            fifty.state();
            none.state();
            hundred.tryAcquire().ifPresent(permit -> permit.release());
            none.tryAcquire().ifPresent(permit -> permit.release());
        }
        assertThat(warnings()).as("each JVM once per other rate").contains(
                "Semaphore '" + name + "' is configured with rate-limit 50 per 60000 ms in this JVM but with rate-limit"
                        + " 100 per 60000 ms in another one: each JVM grants up to its own rate until they agree."
                        + " Configure the same rate-limit and rate-period everywhere" + orARuntimeRate,
                "Semaphore '" + name + "' is configured with no rate limit in this JVM but with rate-limit 50 per"
                        + " 60000 ms in another one: each JVM grants up to its own rate until they agree. Configure the"
                        + " same rate-limit and rate-period everywhere" + orARuntimeRate)
                .doesNotHaveDuplicates();
        assertThat(warnings()).anyMatch(warning -> warning.contains("with rate-limit 100 per 60000 ms in this JVM but"
                + " with no rate limit in another one"));
    }

    /**
     * While a runtime rate is set every JVM with a rate follows it, so their configured rates do not
     * matter and nobody warns (as for a runtime limit of the permits); a JVM without a rate follows
     * none, and that mismatch is still told.
     */
    @Test
    void aRuntimeRateSilencesTheMismatchOfJvmsWithARateButNotOfOneWithout() {
        RedisSemaphore hundred = jvm(SemaphoreSettings.DEFAULTS.withPermits(5).withRateLimit(100, Duration.ofMinutes(1)));
        hundred.state();
        hundred.overrideRateLimit(10, Duration.ofMinutes(1));
        RedisSemaphore fifty = jvm(SemaphoreSettings.DEFAULTS.withPermits(5).withRateLimit(50, Duration.ofMinutes(1)));
        for (int i = 0; i < 3; i++) {
            hundred.state();
            fifty.state();
            hundred.tryAcquire().ifPresent(permit -> permit.release());
            fifty.tryAcquire().ifPresent(permit -> permit.release());
        }
        assertThat(warnings()).as("every JVM with a rate follows the runtime rate").isEmpty();

        RedisSemaphore none = jvm(SemaphoreSettings.DEFAULTS.withPermits(5));
        for (int i = 0; i < 3; i++) {
            none.state();
            hundred.state();
            none.tryAcquire().ifPresent(permit -> permit.release());
        }
        assertThat(warnings()).anyMatch(warning -> warning.contains("configured with no rate limit in this JVM"));
        hundred.clearRateLimitOverride();
    }

    private RedisSemaphore jvm(SemaphoreSettings settings) {
        SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix()).build();
        registries.add(registry);
        return registry.semaphore(name, settings);
    }

    private List<String> warnings() {
        return logs.list.stream().filter(event -> event.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage)
                .filter(message -> message.contains("'" + name + "'") && message.contains("rate"))
                .toList();
    }
}
