package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.ReplyFigures.LimitMismatches;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

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
 * JVMs configured with other permits for one semaphore, on a real Redis: each JVM warns once per
 * base name and other value, however many keyed semaphores share that base name and however often
 * it forgets and re-creates them; and another limit that has not been seen for a while (three
 * leases, at least three minutes) is no longer shown.
 */
@RedisTest
class LimitMismatchTest {

    private final RedisServer server;
    private final List<SemaphoreRegistry> registries = new ArrayList<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(DefaultRedisSemaphore.class);
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final String base = "exports-" + UUID.randomUUID().toString().substring(0, 8);

    LimitMismatchTest(RedisServer server) {
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
    void oneWarningPerBaseNameAndOtherValueHoweverManyKeysAndHoweverOftenTheyAreForgotten() {
        DefaultSemaphoreRegistry two = jvm(2);
        DefaultSemaphoreRegistry four = jvm(4);
        // A rolling deploy: the other JVM's calls on every tenant's semaphore come between ours.
        List<String> tenants = List.of("acme", "globex", "initech", "umbrella");
        for (String tenant : tenants) {
            callsOfBoth(four, two, base + ":" + tenant);
        }
        for (String tenant : tenants) {
            assertThat(semaphore(two, tenant).localState().otherConfiguredLimits()).as(tenant).containsOnlyKeys(4);
        }
        assertThat(warnings("with 2 permits in this JVM but with 4")).singleElement().asString()
                .contains("said once for every semaphore '" + base + ":<key>'");

        // The registry forgets the idle tenants and makes them anew when they are used again.
        DefaultRedisSemaphore before = semaphore(two, "acme");
        two.evictIdleKeyed();
        callsOfBoth(four, two, base + ":acme");
        assertThat(semaphore(two, "acme")).isNotSameAs(before);
        assertThat(semaphore(two, "acme").localState().otherConfiguredLimits()).containsOnlyKeys(4);
        assertThat(warnings("with 2 permits in this JVM but with 4")).hasSize(1);

        // Another value is another warning, once; the other JVM warns on its own, once.
        DefaultSemaphoreRegistry five = jvm(5);
        for (String tenant : tenants) {
            callsOfBoth(five, two, base + ":" + tenant);
        }
        assertThat(warnings("with 2 permits in this JVM but with 5")).hasSize(1);
        assertThat(warnings("with 4 permits in this JVM but with 2")).hasSize(1);
    }

    @Test
    void anotherLimitNotSeenForThreeLeasesOfAtLeastAMinuteIsForgotten() {
        DefaultSemaphoreRegistry two = jvm(2);
        DefaultSemaphoreRegistry four = jvm(4);
        AtomicLong clock = new AtomicLong(System.nanoTime());
        two.limitMismatches().nanoClock(clock::get);
        String name = base + "-single";
        callsOfBoth(four, two, name);
        DefaultRedisSemaphore seenByTwo = (DefaultRedisSemaphore) two.semaphore(name);
        assertThat(seenByTwo.localState().otherConfiguredLimits()).containsOnlyKeys(4);
        // lease 30 s: kept for 3 x 1 min
        assertThat(LimitMismatches.forgetAfter(seenByTwo.settings())).isEqualTo(Duration.ofMinutes(3));
        assertThat(LimitMismatches.forgetAfter(seenByTwo.settings().withLeaseTime(Duration.ofMinutes(5))))
                .isEqualTo(Duration.ofMinutes(15));

        clock.addAndGet(Duration.ofMinutes(3).toNanos());
        assertThat(seenByTwo.localState().otherConfiguredLimits()).as("three minutes on: still shown")
                .containsOnlyKeys(4);
        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(seenByTwo.localState().otherConfiguredLimits()).as("the deploy is over").isEmpty();

        // Seen again: shown again, without a second warning.
        callsOfBoth(four, two, name);
        assertThat(seenByTwo.localState().otherConfiguredLimits()).containsOnlyKeys(4);
        assertThat(warnings("with 2 permits in this JVM but with 4")).hasSize(1);
    }

    @Test
    void capsAndPermitsPerKeyConfiguredOtherwiseAreEachWarnedOnceForAllKeys() {
        String capped = base + "-capped";
        DefaultSemaphoreRegistry small = cappedJvm(capped, 2, 4);
        DefaultSemaphoreRegistry large = cappedJvm(capped, 3, 6);
        for (String tenant : List.of("acme", "globex", "initech")) {
            large.semaphore(capped, tenant, large.settingsOf(capped)).state();
            small.semaphore(capped, tenant, small.settingsOf(capped)).state();
        }
        assertThat(warnings("with total permits 4 (its cap over all keys) in this JVM but with 6")).hasSize(1);
        assertThat(small.cap(capped).otherConfiguredLimits()).containsOnlyKeys(6);
        assertThat(warnings("with 2 permits in this JVM but with 3")).singleElement().asString()
                .contains("said once for every semaphore '" + capped + ":<key>'");
    }

    /** @return a registry as one JVM has it, {@code name} capped at {@code total}, {@code permits} per key */
    private DefaultSemaphoreRegistry cappedJvm(String name, int permits, int total) {
        SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix())
                .configure(name, SemaphoreSettings.DEFAULTS.withPermits(permits).withTotalPermits(total))
                .build();
        registries.add(registry);
        return (DefaultSemaphoreRegistry) registry;
    }

    /** A call of {@code other}, then one of {@code us}: ours learns what the other is configured with. */
    private static void callsOfBoth(DefaultSemaphoreRegistry other, DefaultSemaphoreRegistry us, String name) {
        other.semaphore(name).state();
        us.semaphore(name).state();
    }

    private DefaultRedisSemaphore semaphore(DefaultSemaphoreRegistry registry, String tenant) {
        return (DefaultRedisSemaphore) registry.semaphore(base + ":" + tenant);
    }

    /** @return a registry as one JVM has it, with the base name (and so every key of it) configured with {@code permits} */
    private DefaultSemaphoreRegistry jvm(int permits) {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(permits);
        SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix())
                .configure(base, settings)
                .configure(base + "-single", settings)
                .build();
        registries.add(registry);
        return (DefaultSemaphoreRegistry) registry;
    }

    private List<String> warnings(String text) {
        return logs.list.stream().filter(event -> event.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage)
                .filter(message -> message.contains(text) && message.contains("'" + base))
                .toList();
    }
}
