package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.autoconfigure.dropin.MissingLibrariesAutoConfiguration;
import io.github.redissemaphore.autoconfigure.resilience4j.DistributedBulkheadAutoConfiguration;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.util.stream.Stream;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;

/**
 * Application contexts as a Resilience4j application with our starter gets them: Resilience4j's
 * bulkhead, retry and circuit-breaker auto-configuration and its bulkhead meters (from
 * resilience4j-spring-boot3 on Boot 3.5, resilience4j-spring-boot4 on Boot 4: whichever the class
 * path of the run has), ours, and a meter registry. The switch is the test's to set.
 */
final class Resilience4jContexts {

    /** The package roots of Resilience4j's Boot modules: Boot 3's, then Boot 4's. */
    private static final String[] BOOT_MODULES = {"io.github.resilience4j.springboot3.", "io.github.resilience4j.springboot."};

    /** The switch, on. */
    static final String ON = "distributed-semaphore.resilience4j.enabled=true";

    private Resilience4jContexts() {
    }

    /** @return one "application" on {@code server}; run it twice for two instances */
    static ApplicationContextRunner on(RedisServer server) {
        return StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(DistributedBulkheadAutoConfiguration.class,
                        MissingLibrariesAutoConfiguration.class))
                .withConfiguration(AutoConfigurations.of(
                        resilience4j("bulkhead.autoconfigure.BulkheadAutoConfiguration"),
                        resilience4j("bulkhead.autoconfigure.BulkheadMetricsAutoConfiguration"),
                        resilience4j("retry.autoconfigure.RetryAutoConfiguration"),
                        resilience4j("circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration")))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new);
    }

    /** @return the auto-configuration of Resilience4j's Boot module on the class path, by its name below the root */
    static Class<?> resilience4j(String name) {
        return Stream.of(BOOT_MODULES).filter(root -> ClassUtils.isPresent(root + name, null)).findFirst()
                .map(root -> ClassUtils.resolveClassName(root + name, null))
                .orElseThrow(() -> new IllegalStateException("neither Resilience4j Boot module has " + name));
    }
}
