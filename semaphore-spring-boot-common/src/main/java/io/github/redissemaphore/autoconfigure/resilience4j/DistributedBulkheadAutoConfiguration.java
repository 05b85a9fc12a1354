package io.github.redissemaphore.autoconfigure.resilience4j;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreWebAutoConfiguration;
import io.github.redissemaphore.autoconfigure.dropin.OptInCondition;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.resilience4j.BulkheadFullExceptionHandler;
import io.github.redissemaphore.resilience4j.BulkheadSemaphores;
import io.github.redissemaphore.resilience4j.FleetBulkheadRegistry;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.bulkhead.event.BulkheadEvent;
import io.github.resilience4j.common.CompositeCustomizer;
import io.github.resilience4j.common.bulkhead.configuration.BulkheadConfigCustomizer;
import io.github.resilience4j.consumer.EventConsumerRegistry;
import io.github.resilience4j.core.registry.RegistryEventConsumer;
import io.github.resilience4j.spring6.bulkhead.configure.BulkheadConfigurationProperties;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * With {@code distributed-semaphore.resilience4j.enabled: true}, the application's
 * {@link BulkheadRegistry}: Resilience4j's own registry, configured from its
 * {@code resilience4j.bulkhead.*} properties, customizers, tags, event consumers and meters exactly
 * as Resilience4j's auto-configuration configures it, but whose semaphore bulkheads are backed by
 * distributed semaphores ({@link FleetBulkheadRegistry}). It runs before Resilience4j's
 * {@code BulkheadAutoConfiguration} (Boot 3 and Boot 4 modules), whose registry is
 * {@code @ConditionalOnMissingBean} and so backs off, while its {@code BulkheadAspect}, endpoints and
 * meters use this registry. A registry of the application's own wins over both.
 */
@AutoConfiguration(after = {DistributedSemaphoreAutoConfiguration.class, DistributedSemaphoreWebAutoConfiguration.class},
        beforeName = {
        "io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration",
        "io.github.resilience4j.springboot3.bulkhead.autoconfigure.BulkheadAutoConfiguration"})
@ConditionalOnClass(name = "io.github.resilience4j.spring6.bulkhead.configure.BulkheadConfigurationProperties")
@Conditional(OptInCondition.OnResilience4j.class)
@ConditionalOnBean(SemaphoreRegistry.class)
public final class DistributedBulkheadAutoConfiguration {

    /**
     * The registry, with the bulkheads of {@code resilience4j.bulkhead.instances} (and of the
     * customizers' names) made at once, so a conflict with {@code distributed-semaphore.semaphores}
     * stops the start-up. The other beans are Resilience4j's, made by its auto-configuration.
     */
    @Bean
    @ConditionalOnMissingBean
    public BulkheadRegistry bulkheadRegistry(BulkheadConfigurationProperties properties,
                                             EventConsumerRegistry<BulkheadEvent> bulkheadEventConsumerRegistry,
                                             RegistryEventConsumer<Bulkhead> bulkheadRegistryEventConsumer,
                                             @Qualifier("compositeBulkheadCustomizer")
                                             CompositeCustomizer<BulkheadConfigCustomizer> customizer,
                                             SemaphoreRegistry semaphores,
                                             DistributedSemaphoreProperties semaphoreProperties) {
        Resilience4jBulkheadProperties bulkheads = new Resilience4jBulkheadProperties(properties, customizer);
        BulkheadSemaphores backing = new BulkheadSemaphores(semaphores, semaphoreProperties.semaphores(),
                bulkheads::propertyOf);
        BulkheadRegistry registry = bulkheads.newRegistry(backing, bulkheadRegistryEventConsumer);
        bulkheads.feedEventsTo(registry, bulkheadEventConsumerRegistry);
        bulkheads.createInstances(registry);
        return registry;
    }

    /**
     * Resilience4j's refusal answered with 429 problem details in a web application, where the
     * starter answers its own refusals so (its {@code SemaphoreExceptionHandler} is there).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.http.ProblemDetail")
    @ConditionalOnBean(type = "io.github.redissemaphore.web.SemaphoreExceptionHandler")
    static class ProblemDetails {

        @Bean
        @ConditionalOnMissingBean
        BulkheadFullExceptionHandler bulkheadFullExceptionHandler(DistributedSemaphoreProperties properties) {
            return new BulkheadFullExceptionHandler(properties.problemDetails().retryAfter());
        }
    }
}
