package io.github.redissemaphore.autoconfigure.concurrencylimit;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreWebAutoConfiguration;
import io.github.redissemaphore.autoconfigure.dropin.OptInCondition;
import io.github.redissemaphore.concurrencylimit.DistributedConcurrencyLimitBeanPostProcessor;
import io.github.redissemaphore.concurrencylimit.FleetLimitRejectedExceptionHandler;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.resilience.annotation.ConcurrencyLimitBeanPostProcessor;
import org.springframework.resilience.annotation.EnableResilientMethods;

/**
 * With {@code distributed-semaphore.concurrency-limit.enabled: true}, every {@code @ConcurrencyLimit}
 * method is guarded fleet-wide: {@link DistributedConcurrencyLimitBeanPostProcessor} is registered
 * under Spring's bean name for the {@code @ConcurrencyLimit} post-processor, replacing the one
 * {@code @EnableResilientMethods} registers (keeping its {@code proxyTargetClass} and {@code order}),
 * or standing alone where the application has no such annotation. One post-processor, one advice
 * per method: never guarded twice. {@code @Retryable} stays Spring's.
 */
@AutoConfiguration(after = {DistributedSemaphoreAutoConfiguration.class, DistributedSemaphoreWebAutoConfiguration.class})
@ConditionalOnClass(ConcurrencyLimitBeanPostProcessor.class)
@Conditional(OptInCondition.OnConcurrencyLimit.class)
public final class DistributedConcurrencyLimitAutoConfiguration {

    /** Static: a registry post-processor runs before any other bean is created. */
    @Bean
    static BeanDefinitionRegistryPostProcessor distributedConcurrencyLimitRegistration() {
        return new ProcessorReplacement();
    }

    /** Puts ours in the place of Spring's post-processor, as bean definitions, before any bean is made. */
    static final class ProcessorReplacement implements BeanDefinitionRegistryPostProcessor {

        @Override
        public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) throws BeansException {
            @Nullable Map<String, @Nullable Object> enable = enableResilientMethods(registry);
            if (registry.containsBeanDefinition(DistributedConcurrencyLimitBeanPostProcessor.BEAN_NAME)) {
                registry.removeBeanDefinition(DistributedConcurrencyLimitBeanPostProcessor.BEAN_NAME);
            }
            RootBeanDefinition ours = new RootBeanDefinition(DistributedConcurrencyLimitBeanPostProcessor.class);
            ours.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
            if (enable != null) {
                // what ResilientMethodsConfiguration would have set on Spring's post-processor
                if (Boolean.TRUE.equals(enable.get("proxyTargetClass"))) {
                    ours.getPropertyValues().add("proxyTargetClass", true);
                }
                if (enable.get("order") != null) {
                    ours.getPropertyValues().add("order", enable.get("order"));
                }
            }
            registry.registerBeanDefinition(DistributedConcurrencyLimitBeanPostProcessor.BEAN_NAME, ours);
        }

        @Override
        public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) throws BeansException {
        }

        /** @return the attributes of the application's {@code @EnableResilientMethods}, or null without one */
        private static @Nullable Map<String, @Nullable Object> enableResilientMethods(BeanDefinitionRegistry registry) {
            for (String name : registry.getBeanDefinitionNames()) {
                if (registry.getBeanDefinition(name) instanceof AnnotatedBeanDefinition annotated) {
                    @Nullable Map<String, @Nullable Object> attributes =
                            annotated.getMetadata().getAnnotationAttributes(EnableResilientMethods.class.getName());
                    if (attributes != null) {
                        return attributes;
                    }
                }
            }
            return null;
        }
    }

    /**
     * The fleet-wide limit's refusal answered with 429 problem details in a web application, where
     * the starter answers its own refusals so (its {@code SemaphoreExceptionHandler} is there).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.http.ProblemDetail")
    @ConditionalOnBean(type = "io.github.redissemaphore.web.SemaphoreExceptionHandler")
    static class ProblemDetails {

        @Bean
        @ConditionalOnMissingBean
        FleetLimitRejectedExceptionHandler fleetLimitRejectedExceptionHandler(DistributedSemaphoreProperties properties) {
            return new FleetLimitRejectedExceptionHandler(properties.problemDetails().retryAfter());
        }
    }
}
