package io.github.redissemaphore.starter;

import io.github.redissemaphore.test.UsersRedis;

import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.DiscoverySelector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * What the starter's Spring tests do to a server a user points the suite at (REDIS_URL), as the
 * core's {@code RedisUrlIsLeftIntactTest} proves for the core's tests: a server holding "the
 * user's" data ({@link UsersRedis}) is their REDIS_URL in a run through a JUnit launcher; every
 * test passes, none skips itself, and afterwards the user's keys (DUMP, TTL), script,
 * configuration, ACL users, run id and subscriber are as they were, and no key of the tests is left.
 *
 * <p>The set: the aspect (blocking, two instances, Kotlin {@code suspend} and {@code Flow}), the
 * endpoint over HTTP with runtime limits set through it on two web applications, health (with a
 * test that pauses a {@code @Dedicated} server of its own), metrics and graceful shutdown: every
 * context built on the {@code RedisServer} of a {@code @RedisTest} class. Not the
 * {@code @SpringBootTest} classes: they take {@code RedisServers.shared()}, made once per JVM and
 * held with Spring's cached test contexts, which a run inside this JVM cannot point elsewhere.
 */
@Tag("slow")
class SpringTestsLeaveRedisUrlIntactTest {

    private static final String TESTS = "io.github.redissemaphore.";

    private static final List<DiscoverySelector> SUITE = List.of(
            selectClass(TESTS + "aspect.AspectBehaviourTest"),
            selectClass(TESTS + "aspect.TwoInstancesTest"),
            selectClass(TESTS + "aspect.CoroutineAspectTest"),
            selectClass(TESTS + "actuate.RuntimeLimitWebTest"),
            selectClass(TESTS + "actuate.health.SemaphoresHealthIndicatorTest"),
            selectClass(TESTS + "metrics.SemaphoreMetricsTest"),
            selectClass(TESTS + "autoconfigure.GracefulShutdownTest"));

    @Test
    void theStartersSpringTestsLeaveEveryKeyScriptSettingAndClientOfARedisUrlServerAsItWas() {
        try (UsersRedis users = UsersRedis.start()) {
            UsersRedis.Run run = users.runAsRedisUrl(SUITE);

            run.assertPassed();
            assertThat(run.aborted()).as("skipped on the REDIS_URL server").isEmpty();
            users.assertLeftIntact();
        }
    }
}
