package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Refusing unknown properties refuses none that Spring Boot's relaxed binding accepts: every way
 * of writing {@code lease-time} binds it, in a file and in environment variables alike.
 */
@RedisTest
class RelaxedPropertyNamesTest {

    private final ApplicationContextRunner runner;

    RelaxedPropertyNamesTest(RedisServer server) {
        this.runner = StarterContexts.on(server);
    }

    @ParameterizedTest
    @ValueSource(strings = {"lease-time", "leaseTime", "lease_time", "LEASE_TIME", "LeaseTime"})
    void everyFormOfANameIsKnown(String written) {
        runner.withPropertyValues("distributed-semaphore.defaults." + written + "=7s",
                        "distributed-semaphore.semaphores.pricing." + written + "=9s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    DistributedSemaphoreProperties properties = context.getBean(DistributedSemaphoreProperties.class);
                    assertThat(properties.defaults().leaseTime()).isEqualTo(Duration.ofSeconds(7));
                    assertThat(properties.configuredSettings().get("pricing").leaseTime())
                            .isEqualTo(Duration.ofSeconds(9));
                });
    }

    @ParameterizedTest
    @ValueSource(strings = {"DISTRIBUTED_SEMAPHORE_DEFAULTS_LEASE_TIME", "DISTRIBUTEDSEMAPHORE_DEFAULTS_LEASETIME"})
    void environmentVariablesBind(String variable) {
        runner.withInitializer(context -> context.getEnvironment().getPropertySources().replace(
                        StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                                Map.of(variable, "7s"))))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(DistributedSemaphoreProperties.class).defaults().leaseTime())
                            .isEqualTo(Duration.ofSeconds(7));
                });
    }
}
