package io.github.redissemaphore.autoconfigure;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import io.github.redissemaphore.starter.BootLine;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Every property of the starter, set wrong as a user might write it, stops the start-up with a
 * failure report (as printed, read off the console) that names the property in its dashed form,
 * the value as written, why it is wrong and what is allowed, and says what to change. Binding
 * fails before anything talks to Redis, so no server is needed.
 */
@ExtendWith(OutputCaptureExtension.class)
class InvalidPropertiesFailureReportTest {

    private static final String PREFIX = "distributed-semaphore.";
    private static final String DURATION = " (such as 500ms, 30s or 5m)";
    private static final String NAME_RULE = "1 to 200 characters without '{', '}', whitespace or control characters";

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "enabled                      | maybe      | 'maybe' is not true or false    | true or false",
            "key-prefix                   | my prefix  | value must not contain '{', '}', whitespace or control characters, but 'my prefix' has one at index 2 | " + NAME_RULE,
            "key-prefix                   | app{1}     | value must not contain '{', '}', whitespace or control characters | " + NAME_RULE,
            "defaults.permits             | 0          | must be between 1 and 1000000   | a whole number from 1 to 1000000",
            "defaults.permits             | lots       | 'lots' is not a whole number    | a whole number from 1 to 1000000",
            "defaults.lease-time          | -5s        | must be between 100ms and 24h   | a duration from 100ms to 24h" + DURATION,
            "defaults.lease-time          | 25h        | must be between 100ms and 24h   | a duration from 100ms to 24h" + DURATION,
            "defaults.lease-time          | soon       | 'soon' is not a duration" + DURATION + " | a duration from 100ms to 24h" + DURATION,
            "defaults.wait-time           | -1ms       | must be between 0 and 24h       | a duration from 0 to 24h" + DURATION,
            "defaults.wait-time           | later      | 'later' is not a duration" + DURATION + " | a duration from 0 to 24h" + DURATION,
            "defaults.fair                | maybe      | 'maybe' is not true or false    | true or false",
            "defaults.auto-renew          | sometimes  | 'sometimes' is not true or false | true or false",
            "semaphores.reports.permits   | 0          | must be between 1 and 1000000   | a whole number from 1 to 1000000",
            "semaphores.reports.permits   | 2000000    | must be between 1 and 1000000   | a whole number from 1 to 1000000",
            "semaphores.reports.permits   | lots       | 'lots' is not a whole number    | a whole number from 1 to 1000000",
            "semaphores.reports.lease-time | -5s       | must be between 100ms and 24h   | a duration from 100ms to 24h" + DURATION,
            "semaphores.reports.lease-time | 10ms      | must be between 100ms and 24h   | a duration from 100ms to 24h" + DURATION,
            "semaphores.reports.lease-time | soon      | 'soon' is not a duration" + DURATION + " | a duration from 100ms to 24h" + DURATION,
            "semaphores.reports.wait-time | 25h        | must be between 0 and 24h       | a duration from 0 to 24h" + DURATION,
            "semaphores.reports.wait-time | later      | 'later' is not a duration" + DURATION + " | a duration from 0 to 24h" + DURATION,
            "semaphores.reports.fair      | maybe      | 'maybe' is not true or false    | true or false",
            "semaphores.reports.auto-renew | nah       | 'nah' is not true or false      | true or false",
            "defaults.replicas            | -1         | must be between 0 and 100       | a whole number from 0 to 100",
            "semaphores.reports.replicas  | many       | 'many' is not a whole number    | a whole number from 0 to 100",
            "defaults.replication-timeout | 0ms        | must be between 1ms and 1m      | a duration from 1ms to 1m" + DURATION,
            "semaphores.reports.replication-timeout | 2m | must be between 1ms and 1m    | a duration from 1ms to 1m" + DURATION,
            "semaphores.reports.total-permits | 0      | must be between 1 and 1000000; leave it out for no shared cap | a whole number from 1 to 1000000",
            "semaphores.reports.total-permits | lots   | 'lots' is not a whole number    | a whole number from 1 to 1000000",
            "defaults.max-waiters         | 0          | must be between 1 and 1000000; leave it out for no bound on the queue | a whole number from 1 to 1000000",
            "defaults.max-waiters         | -3         | must be between 1 and 1000000; leave it out for no bound on the queue | a whole number from 1 to 1000000",
            "defaults.max-waiters         | 1000001    | must be between 1 and 1000000; leave it out for no bound on the queue | a whole number from 1 to 1000000",
            "defaults.max-waiters         | many       | 'many' is not a whole number    | a whole number from 1 to 1000000",
            "semaphores.reports.max-waiters | 0        | must be between 1 and 1000000   | a whole number from 1 to 1000000",
            "semaphores.reports.max-waiters | 2000000  | must be between 1 and 1000000   | a whole number from 1 to 1000000",
            "semaphores.reports.max-waiters | lots     | 'lots' is not a whole number    | a whole number from 1 to 1000000",
            "defaults.reject-predicted-timeouts | maybe | 'maybe' is not true or false   | true or false",
            "semaphores.reports.reject-predicted-timeouts | perhaps | 'perhaps' is not true or false | true or false",
            "defaults.when-unavailable    | maybe      | 'maybe' is not reject, local or allow | reject, local or allow",
            "semaphores.reports.when-unavailable | fail-open | 'fail-open' is not reject, local or allow | reject, local or allow",
            "defaults.local-permits       | 0          | must be between 1 and 1000000; leave it out for a share of the permits among the instances Redis last showed | a whole number from 1 to 1000000",
            "defaults.local-permits       | few        | 'few' is not a whole number     | a whole number from 1 to 1000000",
            "semaphores.reports.local-permits | -1     | must be between 1 and 1000000   | a whole number from 1 to 1000000",
            "semaphores.reports.local-permits | half   | 'half' is not a whole number    | a whole number from 1 to 1000000",
            "defaults.rate-limit          | 0          | must be between 1 and 100000; leave it out for no rate limit | a whole number from 1 to 100000",
            "defaults.rate-limit          | 100001     | must be between 1 and 100000; leave it out for no rate limit | a whole number from 1 to 100000",
            "defaults.rate-limit          | many       | 'many' is not a whole number    | a whole number from 1 to 100000",
            "semaphores.reports.rate-limit | -1        | must be between 1 and 100000    | a whole number from 1 to 100000",
            "defaults.rate-period         | 10ms       | must be between 100ms and 24h   | a duration from 100ms to 24h" + DURATION,
            "semaphores.reports.rate-period | 25h      | must be between 100ms and 24h   | a duration from 100ms to 24h" + DURATION,
            "aspect-order                 | lots       | 'lots' is not a whole number    | a whole number from -2147483648 to 2147483647",
            "aspect-order                 | 2147483648 | '2147483648' is not a whole number | a whole number from -2147483648 to 2147483647",
            "waiter-heartbeat             | 500ms      | must be between 1s and 1h       | a duration from 1s to 1h" + DURATION,
            "waiter-heartbeat             | 2h         | must be between 1s and 1h       | a duration from 1s to 1h" + DURATION,
            "waiter-heartbeat             | soon       | 'soon' is not a duration" + DURATION + " | a duration from 1s to 1h" + DURATION,
            "waiter-tick                  | 10ms       | must be between 50ms and 1h     | a duration from 50ms to 1h" + DURATION,
            "waiter-tick                  | 2h         | must be between 50ms and 1h     | a duration from 50ms to 1h" + DURATION,
            "waiter-tick                  | soon       | 'soon' is not a duration" + DURATION + " | a duration from 50ms to 1h" + DURATION,
            "metrics.enabled              | flase      | 'flase' is not true or false    | true or false",
            "unguardable-methods          | ignore     | 'ignore' is not fail or warn    | fail or warn",
            "problem-details.enabled      | flase      | 'flase' is not true or false    | true or false",
            "problem-details.retry-after  | 0s         | must be between 1ms and 24h     | a duration from 1ms to 24h"
                    + DURATION,
            "problem-details.retry-after  | soon       | 'soon' is not a duration" + DURATION
                    + " | a duration from 1ms to 24h" + DURATION,
    })
    void namesThePropertyTheValueAsWrittenAndWhatIsAllowed(String property, String value, String reason,
                                                          String allowed, CapturedOutput output) {
        String report = failureReport(output, "--" + PREFIX + property + "=" + value);
        assertThat(report).contains("Property: " + PREFIX + property + System.lineSeparator())
                .contains("Value: \"" + value + "\"")
                .contains("Origin: \"" + PREFIX + property + "\" from property source \"commandLineArgs\"")
                .contains("Reason: " + reason)
                .contains("Allowed: " + allowed)
                .contains("Action:")
                .contains("Set " + PREFIX + property + " to " + allowed);
        assertThat(report).as("Java names and ISO-8601 values are not what the user wrote")
                .doesNotContain("leaseTime", "waitTime", "autoRenew", "keyPrefix").doesNotContainPattern("PT-?\\d");
    }

    @Test
    void aSemaphoresSettingLeftOutTakesTheDefaultsAndADefaultTakesItsOwn(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.reports.lease-time=-5s"))
                .contains("or remove it to use distributed-semaphore.defaults.lease-time.");
        assertThat(failureReport(output, "--distributed-semaphore.defaults.lease-time=-5s"))
                .contains("or remove it to use the default (30s).");
    }

    @Test
    void aQueueBoundLeftOutIsNoBoundInTheDefaultsAndTheDefaultsBoundForASemaphore(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.defaults.max-waiters=0"))
                .contains("Set distributed-semaphore.defaults.max-waiters to a whole number from 1 to 1000000, "
                        + "or remove it for no bound on the queue.");
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.reports.max-waiters=0"))
                .contains("Set distributed-semaphore.semaphores.reports.max-waiters to a whole number from 1 to "
                        + "1000000, or remove it to use distributed-semaphore.defaults.max-waiters.");
    }

    @Test
    void aLocalShareLeftOutIsAShareOfTheFleetInTheDefaultsAndTheDefaultsShareForASemaphore(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.defaults.local-permits=0"))
                .contains("Set distributed-semaphore.defaults.local-permits to a whole number from 1 to 1000000, "
                        + "or remove it for a share of the permits among the instances Redis last showed.");
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.reports.local-permits=0"))
                .contains("Set distributed-semaphore.semaphores.reports.local-permits to a whole number from 1 to "
                        + "1000000, or remove it to use distributed-semaphore.defaults.local-permits.");
    }

    @Test
    void aLocalShareAboveThePermitsNamesThePermitsItExceeds(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.reports.permits=4",
                "--distributed-semaphore.semaphores.reports.local-permits=5"))
                .contains("Property: distributed-semaphore.semaphores.reports.local-permits" + System.lineSeparator())
                .contains("Value: \"5\"")
                .contains("Reason: must be at most distributed-semaphore.semaphores.reports.permits (4)"
                        + System.lineSeparator())
                .contains("Allowed: a whole number from 1 to 1000000, and at most "
                        + "distributed-semaphore.semaphores.reports.permits (4)" + System.lineSeparator());
        assertThat(failureReport(output, "--distributed-semaphore.defaults.local-permits=2"))
                .as("the defaults' permits: 1 unless set")
                .contains("Property: distributed-semaphore.defaults.local-permits" + System.lineSeparator())
                .contains("Value: \"2\"")
                .contains("Reason: must be at most distributed-semaphore.defaults.permits (1)" + System.lineSeparator());
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.reports.local-permits=3"))
                .as("a semaphore's own share above the defaults' permits it takes")
                .contains("Property: distributed-semaphore.semaphores.reports.local-permits" + System.lineSeparator())
                .contains("Reason: must be at most distributed-semaphore.defaults.permits (1)" + System.lineSeparator());
    }

    @Test
    void theDefaultsShareAboveTheOwnPermitsOfASemaphoreThatTakesItNamesBoth(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.defaults.permits=10",
                "--distributed-semaphore.defaults.local-permits=5", "--distributed-semaphore.semaphores[api.pay].permits=2"))
                .contains("Property: distributed-semaphore.defaults.local-permits" + System.lineSeparator())
                .contains("Value: \"5\"")
                .contains("Reason: must be at most distributed-semaphore.semaphores[api.pay].permits (2), which takes "
                        + "its local-permits from the defaults; or set distributed-semaphore.semaphores[api.pay]"
                        + ".local-permits" + System.lineSeparator());
    }

    @Test
    void aNameThatNeedsBracketsKeepsThem(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.semaphores[api.payments].lease-time=-5s"))
                .contains("Property: distributed-semaphore.semaphores[api.payments].lease-time" + System.lineSeparator())
                .contains("Value: \"-5s\"");
        assertThat(failureReport(output, "--distributed-semaphore.semaphores[reports].permits=0"))
                .as("brackets a plain name does not need are left out, as the documentation writes it")
                .contains("Property: distributed-semaphore.semaphores.reports.permits" + System.lineSeparator());
    }

    @ParameterizedTest
    @ValueSource(strings = {"bad{name}", "bad name", "tab\there"})
    void anInvalidSemaphoreNameIsNamed(String name, CapturedOutput output) {
        String report = failureReport(output, "--distributed-semaphore.semaphores[" + name + "].permits=2");
        assertThat(report).contains("Property: distributed-semaphore.semaphores[" + name + "]" + System.lineSeparator())
                .contains("Value: \"" + name + "\"")
                .contains("Origin: \"distributed-semaphore.semaphores[" + name + "].permits\"")
                .contains("Reason: value must not contain '{', '}', whitespace or control characters")
                .contains("Allowed: " + NAME_RULE)
                .contains("Rename the semaphore \"" + name + "\": a semaphore name is " + NAME_RULE + ".")
                .as("not the settings the name was given")
                .doesNotContain("Semaphore[");
    }

    @Test
    void aNameOrPrefixTooLongIsRefused(CapturedOutput output) {
        String name = "n".repeat(201);
        assertThat(failureReport(output, "--distributed-semaphore.semaphores." + name + ".permits=2"))
                .contains("Property: distributed-semaphore.semaphores." + name + System.lineSeparator())
                .contains("Reason: value must be 1 to 200 characters long, but was 201 characters");
        assertThat(failureReport(output, "--distributed-semaphore.key-prefix=" + name))
                .contains("Property: distributed-semaphore.key-prefix" + System.lineSeparator())
                .contains("Value: \"" + name + "\"")
                .contains("Reason: value must be 1 to 200 characters long, but was 201 characters");
        assertThat(failureReport(output, "--distributed-semaphore.key-prefix="))
                .contains("Value: \"\"")
                .contains("Reason: value must be 1 to 200 characters long, but was 0 characters");
    }

    @Test
    void theHeartbeatMustOutlastTwoTicks(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.waiter-heartbeat=1s"))
                .contains("Property: distributed-semaphore.waiter-heartbeat" + System.lineSeparator())
                .contains("Value: \"1s\"")
                .contains("Reason: must be at least twice distributed-semaphore.waiter-tick (1s)")
                .contains("Set distributed-semaphore.waiter-heartbeat to a duration from 1s to 1h" + DURATION
                        + ", and at least twice distributed-semaphore.waiter-tick (1s)");
        assertThat(failureReport(output, "--distributed-semaphore.waiter-tick=3s"))
                .as("the heartbeat left out is shown with its default")
                .contains("Property: distributed-semaphore.waiter-heartbeat" + System.lineSeparator())
                .contains("Value: \"5s\" (not set: the default)")
                .contains("Reason: must be at least twice distributed-semaphore.waiter-tick (3s)");
    }

    @Test
    void aValueWhereSettingsBelongIsRefused(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.reports=5"))
                .contains("Property: distributed-semaphore.semaphores.reports" + System.lineSeparator())
                .contains("Value: \"5\"")
                .contains("Reason: holds settings, not a value")
                .contains("Write each setting as a property of its own: distributed-semaphore.semaphores.reports."
                        + "<setting>, where <setting> is one of permits, lease-time, wait-time, fair, auto-renew, replicas, "
                        + "replication-timeout, total-permits, max-waiters, reject-predicted-timeouts, when-unavailable, "
                        + "local-permits, rate-limit, rate-period.");
    }

    @Test
    void aYamlFileIsQuotedWithItsLineAndEveryWrongValueOfAGroupAtOnce(CapturedOutput output) {
        String report = failureReport(output,
                "--spring.config.location=classpath:/io/github/redissemaphore/autoconfigure/invalid-semaphores.yml");
        assertThat(report).contains("Property: distributed-semaphore.semaphores.reports.lease-time" + System.lineSeparator())
                .contains("Value: \"-5s\"")
                .containsPattern("Origin: class path resource \\[.*invalid-semaphores.yml] .*- 5:19")
                .as("written in camel case, named in the dashed form")
                .contains("Property: distributed-semaphore.semaphores.reports.wait-time" + System.lineSeparator())
                .contains("Value: \"-1s\"")
                .containsPattern("Origin: class path resource \\[.*invalid-semaphores.yml] .*- 6:17")
                .contains("Set distributed-semaphore.semaphores.reports.lease-time to a duration from 100ms to 24h")
                .contains("Set distributed-semaphore.semaphores.reports.wait-time to a duration from 0 to 24h");
    }

    @Test
    void otherPropertiesAreLeftToBoot(CapturedOutput output) {
        assertThat(failureReport(output, "--spring.data.redis.port=lots"))
                .contains("Failed to bind properties under 'spring.data.redis.port'")
                .doesNotContain("Invalid distributed semaphore configuration");
    }

    /** @return the failure report the application printed, from its banner line on */
    static String failureReport(CapturedOutput output, String... arguments) {
        SpringApplication application = new SpringApplication(MinimalApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setBannerMode(Banner.Mode.OFF);
        String[] all = Stream.concat(Stream.of("--spring.data.redis.url=redis://127.0.0.1:1"), Stream.of(arguments))
                .toArray(String[]::new);
        assertThatException().isThrownBy(() -> application.run(all));
        String printed = output.toString();
        int report = printed.lastIndexOf("APPLICATION FAILED TO START");
        assertThat(report).as("a failure report in %s", printed).isNotNegative();
        return printed.substring(report);
    }

    @Configuration(proxyBeanMethods = false)
    @BootLine.ImportRedisAutoConfiguration
    @ImportAutoConfiguration({AopAutoConfiguration.class,
            DistributedSemaphoreAutoConfiguration.class})
    static class MinimalApplication {
    }
}
