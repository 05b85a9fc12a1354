package io.github.redissemaphore.autoconfigure;

import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import io.github.redissemaphore.starter.BootLine;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.validation.FieldError;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A wrong value in application.yml stops the start-up with a message naming the property and
 * what it may be. Binding fails before anything talks to Redis, so no server is needed.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedSemaphorePropertiesValidationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootLine.REDIS_AUTO_CONFIGURATION,
                    DistributedSemaphoreAutoConfiguration.class))
            // never reached: binding fails first
            .withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1");

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "distributed-semaphore.semaphores.reports.permits | 0 | distributed-semaphore.semaphores[reports].permits | must be between 1 and 1000000",
            "distributed-semaphore.semaphores.reports.permits | 2000000 | distributed-semaphore.semaphores[reports].permits | must be between 1 and 1000000",
            "distributed-semaphore.defaults.permits | 0 | distributed-semaphore.defaults.permits | must be between 1 and 1000000",
            "distributed-semaphore.defaults.lease-time | -1s | distributed-semaphore.defaults.lease-time | must be between 100ms and 24h",
            "distributed-semaphore.semaphores.reports.lease-time | 10ms | distributed-semaphore.semaphores[reports].lease-time | must be between 100ms and 24h",
            "distributed-semaphore.defaults.lease-time | 25h | distributed-semaphore.defaults.lease-time | must be between 100ms and 24h",
            "distributed-semaphore.defaults.wait-time | -5s | distributed-semaphore.defaults.wait-time | must be between 0 and 24h",
            "distributed-semaphore.semaphores.reports.wait-time | -1ms | distributed-semaphore.semaphores[reports].wait-time | must be between 0 and 24h",
            "distributed-semaphore.semaphores[bad{name}].permits | 2 | distributed-semaphore.semaphores[bad{name}] | value must not contain '{', '}', whitespace or control characters",
            "distributed-semaphore.semaphores[bad name].permits | 2 | distributed-semaphore.semaphores[bad name] | value must not contain '{', '}', whitespace or control characters",
            "distributed-semaphore.key-prefix | my prefix | distributed-semaphore.key-prefix | value must not contain '{', '}', whitespace or control characters",
            "distributed-semaphore.key-prefix | app{1} | distributed-semaphore.key-prefix | value must not contain '{', '}', whitespace or control characters",
            "distributed-semaphore.waiter-tick | 10ms | distributed-semaphore.waiter-tick | must be between 50ms and 1h",
            "distributed-semaphore.redis-timeout | 50ms | distributed-semaphore.redis-timeout | must be between 100ms and 1m",
            "distributed-semaphore.redis-timeout | 2m | distributed-semaphore.redis-timeout | must be between 100ms and 1m",
            "distributed-semaphore.semaphores.reports.local-permits | 0 | distributed-semaphore.semaphores[reports].local-permits | must be between 1 and 1000000",
            "distributed-semaphore.defaults.local-permits | 2 | distributed-semaphore.defaults.local-permits | must be at most distributed-semaphore.defaults.permits (1)",
            "distributed-semaphore.semaphores.reports.local-permits | 3 | distributed-semaphore.semaphores[reports].local-permits | must be at most distributed-semaphore.defaults.permits (1)",
    })
    void anInvalidValueStopsTheStartUpNamingTheProperty(String property, String value, String named,
                                                        String reason) {
        runner.withPropertyValues(property + "=" + value).run(context -> {
            assertThat(context).hasFailed();
            assertThat(describe(context.getStartupFailure())).contains(named + ": " + reason);
        });
    }

    @Test
    void aKeyPrefixTooLongIsRefused() {
        runner.withPropertyValues("distributed-semaphore.key-prefix=" + "p".repeat(201)).run(context ->
                assertThat(describe(context.getStartupFailure()))
                        .contains("distributed-semaphore.key-prefix: value must be 1 to 200 characters long"));
    }

    @Test
    void theStartUpFailureReportNamesThePropertyAndTheRange(CapturedOutput output) {
        SpringApplication application = new SpringApplication(MinimalApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatException().isThrownBy(() -> application.run(
                "--spring.data.redis.url=redis://127.0.0.1:1",
                "--distributed-semaphore.semaphores.reports.permits=0"));
        assertThat(output).contains("Property: distributed-semaphore.semaphores.reports.permits")
                .contains("Value: \"0\"")
                .contains("Reason: must be between 1 and 1000000")
                .contains("Allowed: a whole number from 1 to 1000000");
    }

    /**
     * Each field error as property and reason, as Boot's failure analysis prints them, but with
     * the field in the dashed form the application configures it in ({@code keyPrefix} is
     * {@code key-prefix}).
     */
    private static String describe(Throwable failure) {
        Throwable cause = failure;
        while (cause != null && !(cause instanceof BindValidationException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("a bind validation failure in %s", failure).isNotNull();
        BindValidationException validation = (BindValidationException) cause;
        return validation.getValidationErrors().getAllErrors().stream()
                .map(error -> error instanceof FieldError field
                        ? field.getObjectName() + "." + DataObjectPropertyName.toDashedForm(field.getField()) + ": " + field.getDefaultMessage()
                        : error.getObjectName() + ": " + error.getDefaultMessage())
                .collect(Collectors.joining("\n"));
    }

    @Configuration(proxyBeanMethods = false)
    @BootLine.ImportRedisAutoConfiguration
    @ImportAutoConfiguration(DistributedSemaphoreAutoConfiguration.class)
    static class MinimalApplication {
    }
}
