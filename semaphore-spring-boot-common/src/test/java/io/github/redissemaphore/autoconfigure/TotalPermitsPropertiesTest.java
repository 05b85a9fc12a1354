package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code distributed-semaphore.semaphores.<name>.total-permits}, the cap over all keys of a keyed
 * semaphore: it reaches the semaphore's settings and those of each of its keys, and each wrong
 * value stops the start-up with a failure analysis that names the property as written and what
 * is allowed, before the registry exists: nothing is written to Redis.
 */
@RedisTest
class TotalPermitsPropertiesTest {

    private static final String EXPORTS = "distributed-semaphore.semaphores.exports.";
    private static final String NL = System.lineSeparator();

    private final RedisServer server;
    private final ApplicationContextRunner runner;

    TotalPermitsPropertiesTest(RedisServer server) {
        this.server = server;
        this.runner = StarterContexts.on(server);
    }

    @Test
    void theCapReachesTheSemaphoreAndEachOfItsKeys() {
        runner.withPropertyValues(EXPORTS + "permits=2", EXPORTS + "total-permits=10").run(context -> {
            SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
            assertThat(registry.settingsOf("exports").totalPermits()).isEqualTo(10);
            assertThat(registry.settingsOf("exports").permits()).as("per key, as without a cap").isEqualTo(2);
            assertThat(registry.settingsOf("exports:acme").totalPermits()).isEqualTo(10);
            assertThat(registry.settingsOf("exports:acme").permits()).isEqualTo(2);
            assertThat(registry.settingsOf("reports").capped()).as("no cap unless set").isFalse();
        });
    }

    @Test
    void aSemaphoreWithoutTheCapHasNone() {
        runner.withPropertyValues(EXPORTS + "permits=2").run(context ->
                assertThat(context.getBean(SemaphoreRegistry.class).settingsOf("exports:acme").totalPermits()).isZero());
    }

    @ParameterizedTest(name = "total-permits={0}")
    @ValueSource(strings = {"0", "-5", "1000001"})
    void outOfRangeNamesThePropertyTheRangeAndThatLeavingItOutMeansNoCap(String value) {
        assertThat(analysis(EXPORTS + "total-permits=" + value))
                .contains("Property: " + EXPORTS + "total-permits" + NL)
                .contains("Value: \"" + value + "\"")
                .contains("Reason: must be between 1 and 1000000; leave it out for no shared cap" + NL)
                .contains("Allowed: a whole number from 1 to 1000000" + NL)
                .contains("Set " + EXPORTS + "total-permits to a whole number from 1 to 1000000, or remove it for "
                        + "no shared cap.");
    }

    @Test
    void aValueThatIsNoNumberIsRefusedAsSuch() {
        assertThat(analysis(EXPORTS + "total-permits=lots"))
                .contains("Property: " + EXPORTS + "total-permits" + NL)
                .contains("Reason: 'lots' is not a whole number")
                .contains("Allowed: a whole number from 1 to 1000000");
    }

    @Test
    void belowTheSemaphoresPermitsNamesBothPropertiesAndTheirValues() {
        assertThat(analysis(EXPORTS + "permits=5", EXPORTS + "total-permits=3"))
                .contains("Property: " + EXPORTS + "total-permits" + NL)
                .contains("Value: \"3\"")
                .contains("Reason: must be at least " + EXPORTS + "permits (5), what each key alone may hold" + NL)
                .contains("Allowed: a whole number from 1 to 1000000, and at least " + EXPORTS + "permits (5), what "
                        + "each key alone may hold" + NL)
                .contains("or remove it for no shared cap.");
    }

    @Test
    void belowThePermitsTakenFromTheDefaultsNamesTheDefaults() {
        assertThat(analysis("distributed-semaphore.defaults.permits=5", EXPORTS + "total-permits=3"))
                .contains("Property: " + EXPORTS + "total-permits" + NL)
                .contains("Reason: must be at least distributed-semaphore.defaults.permits (5), what each key alone "
                        + "may hold" + NL);
        assertThat(analysis("distributed-semaphore.defaults.permits=5", EXPORTS + "permits=2",
                EXPORTS + "total-permits=3")).as("the semaphore's own permits win").isEmpty();
    }

    @Test
    void aNameThatNeedsBracketsKeepsThemInBothProperties() {
        assertThat(analysis("distributed-semaphore.semaphores[api.exports].permits=5",
                "distributed-semaphore.semaphores[api.exports].total-permits=3"))
                .contains("Property: distributed-semaphore.semaphores[api.exports].total-permits" + NL)
                .contains("Reason: must be at least distributed-semaphore.semaphores[api.exports].permits (5)");
    }

    @Test
    void aCapInTheDefaultsIsRefusedAsUnknownSayingItIsSetPerSemaphore() {
        assertThat(analysis("distributed-semaphore.defaults.total-permits=10"))
                .contains("Property: distributed-semaphore.defaults.total-permits" + NL)
                .contains("Reason: unknown property: total-permits is set per semaphore, as "
                        + "distributed-semaphore.semaphores.<name>.total-permits, and has no default" + NL)
                .contains("Remove distributed-semaphore.defaults.total-permits, and set "
                        + "distributed-semaphore.semaphores.<name>.total-permits for each semaphore that needs it.");
    }

    /**
     * @return the failure analysis of a start-up with these properties, as the report prints it;
     *         empty if it started. Either way nothing under the server's key prefix is in Redis.
     */
    private String analysis(String... properties) {
        String[] report = {""};
        runner.withPropertyValues(properties).run(context -> {
            if (context.getStartupFailure() != null) {
                FailureAnalysis analysis = new InvalidPropertiesFailureAnalyzer(environment(properties))
                        .analyze(context.getStartupFailure());
                assertThat(analysis).as("an analysis of %s", context.getStartupFailure()).isNotNull();
                report[0] = analysis.getDescription() + NL + "Action:" + NL + analysis.getAction();
                assertThat(server.keys(server.keyPrefix() + "*")).as("written to Redis").isEmpty();
            }
        });
        return report[0];
    }

    /** What the failed context's environment held, which it no longer gives out: where a value is looked up. */
    private static MockEnvironment environment(String... properties) {
        MockEnvironment environment = new MockEnvironment();
        for (String property : properties) {
            environment.setProperty(property.substring(0, property.indexOf('=')),
                    property.substring(property.indexOf('=') + 1));
        }
        return environment;
    }
}
