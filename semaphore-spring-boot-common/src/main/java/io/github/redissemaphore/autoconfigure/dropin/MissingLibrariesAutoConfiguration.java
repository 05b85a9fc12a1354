package io.github.redissemaphore.autoconfigure.dropin;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Stops the start-up when a drop-in's switch is on but its library is not on the class path: a
 * condition that merely did not match would leave the application running with a per-JVM limit
 * while its configuration says fleet-wide. Each check is a bean that fails as it is created.
 */
@AutoConfiguration
public final class MissingLibrariesAutoConfiguration {

    /** Resilience4j's Spring support (resilience4j-spring6, which its Boot modules bring) is missing. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OptInCondition.OnResilience4j.class)
    @ConditionalOnMissingClass("io.github.resilience4j.spring6.bulkhead.configure.BulkheadConfigurationProperties")
    static class Resilience4jMissing {

        @Bean
        InitializingBean distributedSemaphoreResilience4jCheck() {
            return () -> {
                throw new MissingLibraryException(OptInCondition.OnResilience4j.PROPERTY,
                        "Resilience4j's Spring Boot support is not on the class path",
                        "Add io.github.resilience4j:resilience4j-spring-boot4 (Spring Boot 4) or "
                                + "io.github.resilience4j:resilience4j-spring-boot3 (Spring Boot 3), 2.4.0 or later, "
                                + "to the application's dependencies, or remove "
                                + OptInCondition.OnResilience4j.PROPERTY + ".");
            };
        }
    }

    /** Spring Framework 7's {@code @ConcurrencyLimit} is missing: Spring Framework 6 (Boot 3) has none. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OptInCondition.OnConcurrencyLimit.class)
    @ConditionalOnMissingClass("org.springframework.resilience.annotation.ConcurrencyLimitBeanPostProcessor")
    static class ConcurrencyLimitMissing {

        @Bean
        InitializingBean distributedSemaphoreConcurrencyLimitCheck() {
            return () -> {
                throw new MissingLibraryException(OptInCondition.OnConcurrencyLimit.PROPERTY,
                        "this application runs Spring Framework 6, which has no @ConcurrencyLimit "
                                + "(it came with Spring Framework 7)",
                        "Remove " + OptInCondition.OnConcurrencyLimit.PROPERTY + ", or move the application to "
                                + "Spring Boot 4 with io.github.redissemaphore:semaphore-spring-boot-starter; on "
                                + "Spring Boot 3, guard the methods with @DistributedSemaphore.");
            };
        }
    }
}
