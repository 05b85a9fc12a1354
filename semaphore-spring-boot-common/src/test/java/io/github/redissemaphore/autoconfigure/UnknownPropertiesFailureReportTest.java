package io.github.redissemaphore.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static io.github.redissemaphore.autoconfigure.InvalidPropertiesFailureReportTest.failureReport;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A property under {@code distributed-semaphore} that the starter does not know (a typo) stops the
 * start-up with a report naming it as written, its origin, and the known property it most likely
 * stands for. Binding fails before anything talks to Redis, so no server is needed.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesFailureReportTest {

    private static final String PREFIX = "distributed-semaphore.";
    private static final String SEMAPHORE_SETTINGS = "permits, lease-time, wait-time, fair, auto-renew, replicas, "
            + "replication-timeout, total-permits, max-waiters, reject-predicted-timeouts, when-unavailable, local-permits, "
            + "rate-limit, rate-period";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // per semaphore, in defaults, at the top level
            "semaphores.pricing.permit          | permits                    | semaphores.pricing.permits",
            "defaults.permit                    | permits                    | defaults.permits",
            "semaphores.pricing.leaseTme        | lease-time                 | semaphores.pricing.lease-time",
            "semaphores.pricing.wait            | wait-time                  | semaphores.pricing.wait-time",
            "semaphores.pricing.maxWaiter       | max-waiters                | semaphores.pricing.max-waiters",
            "defaults.waiters                   | max-waiters                | defaults.max-waiters",
            "semaphores.pricing.whenUnavailble  | when-unavailable           | semaphores.pricing.when-unavailable",
            "defaults.local-permit              | local-permits              | defaults.local-permits",
            "semaphores.pricing.replication-timout | replication-timeout     | semaphores.pricing.replication-timeout",
            "metrics.enable                     | enabled                    | metrics.enabled",
            "key-prefx                          | key-prefix                 | key-prefix",
            "waiter-heartbeet                   | waiter-heartbeat           | waiter-heartbeat",
            // a level left out, or misspelt on the way
            "permits                            | defaults.permits           | defaults.permits",
            "pricing.permits                    | semaphores.pricing.permits | semaphores.pricing.permits",
            "semaphore.pricing.permits          | semaphores.pricing.permits | semaphores.pricing.permits",
            "semaphores[api.payments].permit    | permits                    | semaphores[api.payments].permits",
    })
    void namesTheKeyAsWrittenAndTheClosestKnownOne(String written, String meant, String renamed,
                                                  CapturedOutput output) {
        String report = failureReport(output, "--" + PREFIX + written + "=3");
        assertThat(report).contains("Property: " + PREFIX + written + System.lineSeparator())
                .contains("Value: \"3\"")
                .contains("Origin: \"" + PREFIX + written + "\" from property source \"commandLineArgs\"")
                .contains("Reason: unknown property: did you mean " + meant + "?")
                .contains("Rename " + PREFIX + written + " to " + PREFIX + renamed + ".");
    }

    @Test
    void aYamlTypoIsShownWithItsFileAndLineAndWhatIsAllowedThere(CapturedOutput output) {
        String report = failureReport(output,
                "--spring.config.location=classpath:/io/github/redissemaphore/autoconfigure/typo-semaphores.yml");
        assertThat(report).contains("Invalid distributed semaphore configuration")
                .contains("Property: distributed-semaphore.semaphores.pricing.permit" + System.lineSeparator())
                .contains("Value: \"3\"")
                .containsPattern("Origin: class path resource \\[.*typo-semaphores.yml] .*- 4:15")
                .contains("Reason: unknown property: did you mean permits?")
                .contains("Allowed: " + SEMAPHORE_SETTINGS)
                .contains("Rename distributed-semaphore.semaphores.pricing.permit to "
                        + "distributed-semaphore.semaphores.pricing.permits.")
                .as("the key it did write right is not reported").doesNotContain("wait-time" + System.lineSeparator());
    }

    @Test
    void aKeyFarFromAnyListsWhatIsAllowedThere(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.pricing.colour=red"))
                .contains("Property: distributed-semaphore.semaphores.pricing.colour" + System.lineSeparator())
                .contains("Reason: unknown property" + System.lineSeparator())
                .contains("Allowed: " + SEMAPHORE_SETTINGS)
                .contains("Remove distributed-semaphore.semaphores.pricing.colour, or write one of the settings "
                        + "allowed under distributed-semaphore.semaphores.pricing: " + SEMAPHORE_SETTINGS + ".");
        assertThat(failureReport(output, "--distributed-semaphore.colour=red"))
                .contains("Reason: unknown property" + System.lineSeparator())
                .contains("Allowed: enabled, key-prefix, redis-timeout, defaults, semaphores, aspect-order");
    }

    @Test
    void settingsBelowAValueAreRefused(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.defaults.permits.max=3"))
                .contains("Property: distributed-semaphore.defaults.permits.max" + System.lineSeparator())
                .contains("Reason: distributed-semaphore.defaults.permits takes a value, not settings")
                .contains("Set distributed-semaphore.defaults.permits itself, to a whole number from 1 to 1000000.");
    }

    @Test
    void everyUnknownKeyIsReportedAtOnce(CapturedOutput output) {
        assertThat(failureReport(output, "--distributed-semaphore.semaphores.pricing.permit=3",
                "--distributed-semaphore.defaults.leasetime-max=5s"))
                .contains("Property: distributed-semaphore.semaphores.pricing.permit" + System.lineSeparator())
                .contains("Property: distributed-semaphore.defaults.leasetime-max" + System.lineSeparator());
    }
}
