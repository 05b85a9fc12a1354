package io.github.redissemaphore.autoconfigure.dropin;

import io.github.redissemaphore.autoconfigure.resilience4j.DistributedBulkheadAutoConfiguration;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up errors of the drop-ins, each naming what to change: a limit configured twice with
 * two values, a switch on without its library, a switch that is neither true nor false.
 */
@RedisTest
class DropInStartupFailuresTest {

    private static final String NL = System.lineSeparator();

    private final RedisServer server;
    private final ApplicationContextRunner runner;

    DropInStartupFailuresTest(RedisServer server) {
        this.server = server;
        this.runner = StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(DistributedBulkheadAutoConfiguration.class,
                        MissingLibrariesAutoConfiguration.class, resilience4j("BulkheadAutoConfiguration")));
    }

    @Test
    void aLimitConfiguredInBothPlacesWithTwoValuesNamesBothProperties() {
        assertThat(analysis(new ConflictingLimitFailureAnalyzer(), runner.withPropertyValues(
                "distributed-semaphore.resilience4j.enabled=true",
                "resilience4j.bulkhead.instances.reports.max-concurrent-calls=3",
                "distributed-semaphore.semaphores.reports.permits=5")))
                .contains("Semaphore 'reports' is configured twice with different values: "
                        + "resilience4j.bulkhead.instances.reports.max-concurrent-calls = 3, "
                        + "but distributed-semaphore.semaphores.reports.permits = 5")
                .contains("Remove distributed-semaphore.semaphores.reports.permits (the value of "
                        + "resilience4j.bulkhead.instances.reports.max-concurrent-calls then applies fleet-wide), "
                        + "or give both the same value.");
    }

    @Test
    void aWaitFromABaseConfigurationNamesThatConfiguration() {
        assertThat(analysis(new ConflictingLimitFailureAnalyzer(), runner.withPropertyValues(
                "distributed-semaphore.resilience4j.enabled=true",
                "resilience4j.bulkhead.configs.slow.max-wait-duration=2s",
                "resilience4j.bulkhead.instances.reports.base-config=slow",
                "distributed-semaphore.semaphores.reports.wait-time=5s")))
                .contains("resilience4j.bulkhead.configs.slow.max-wait-duration = PT2S, "
                        + "but distributed-semaphore.semaphores.reports.wait-time = PT5S");
    }

    @Test
    void theSameValueInBothPlacesStarts() {
        runner.withPropertyValues("distributed-semaphore.resilience4j.enabled=true",
                        "resilience4j.bulkhead.instances.reports.max-concurrent-calls=3",
                        "distributed-semaphore.semaphores.reports.permits=3",
                        "distributed-semaphore.semaphores.reports.lease-time=10s")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void theResilience4jSwitchWithoutResilience4jSaysWhatToAdd() {
        assertThat(analysis(new MissingLibraryFailureAnalyzer(), StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(DistributedBulkheadAutoConfiguration.class,
                        MissingLibrariesAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("io.github.resilience4j"))
                .withPropertyValues("distributed-semaphore.resilience4j.enabled=true")))
                .contains("distributed-semaphore.resilience4j.enabled is true, but Resilience4j's Spring Boot support "
                        + "is not on the class path")
                .contains("Add io.github.resilience4j:resilience4j-spring-boot4 (Spring Boot 4) or "
                        + "io.github.resilience4j:resilience4j-spring-boot3 (Spring Boot 3)");
    }

    @Test
    void theConcurrencyLimitSwitchWithoutSpringFramework7SaysSo() {
        assertThat(analysis(new MissingLibraryFailureAnalyzer(), runner
                .withClassLoader(new FilteredClassLoader("org.springframework.resilience"))
                .withPropertyValues("distributed-semaphore.concurrency-limit.enabled=true")))
                .contains("distributed-semaphore.concurrency-limit.enabled is true, but this application runs "
                        + "Spring Framework 6, which has no @ConcurrencyLimit")
                .contains("Remove distributed-semaphore.concurrency-limit.enabled, or move the application to "
                        + "Spring Boot 4");
    }

    @Test
    void aSwitchThatIsNeitherTrueNorFalseStopsTheStartUp() {
        runner.withPropertyValues("distributed-semaphore.resilience4j.enabled=flase")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("distributed-semaphore.resilience4j.enabled"));
    }

    private static String analysis(FailureAnalyzer analyzer, ApplicationContextRunner runner) {
        String[] report = {""};
        runner.run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = analyzer.analyze(context.getStartupFailure());
            assertThat(analysis).as("an analysis of %s", context.getStartupFailure()).isNotNull();
            report[0] = analysis.getDescription() + NL + "Action:" + NL + analysis.getAction();
        });
        return report[0];
    }

    private static Class<?> resilience4j(String name) {
        return Stream.of("io.github.resilience4j.springboot3.bulkhead.autoconfigure.",
                        "io.github.resilience4j.springboot.bulkhead.autoconfigure.")
                .filter(root -> ClassUtils.isPresent(root + name, null)).findFirst()
                .map(root -> ClassUtils.resolveClassName(root + name, null)).orElseThrow();
    }
}
