package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.web.SemaphoreExceptionHandler;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ProblemDetail;

/**
 * Answers the semaphores' exceptions with 429 and 503 problem details
 * ({@link SemaphoreExceptionHandler}) in a Spring MVC or WebFlux application, unless
 * {@value #ENABLED} is false or the application has a {@link SemaphoreExceptionHandler} of its own.
 */
@AutoConfiguration
@ConditionalOnClass(ProblemDetail.class)
@Conditional({OnEnabledCondition.class, DistributedSemaphoreWebAutoConfiguration.OnMvcOrWebFlux.class,
        DistributedSemaphoreWebAutoConfiguration.OnProblemDetailsEnabled.class})
@EnableConfigurationProperties(DistributedSemaphoreProperties.class)
public final class DistributedSemaphoreWebAutoConfiguration {

    /** The property that switches the answers off. */
    public static final String ENABLED = "distributed-semaphore.problem-details.enabled";

    @Bean
    @ConditionalOnMissingBean
    public SemaphoreExceptionHandler semaphoreExceptionHandler(DistributedSemaphoreProperties properties,
                                                               ObjectProvider<SemaphoreRegistry> registry) {
        // asked when an answer is written: the registry's settings, keyed names resolved as it resolves them
        return new SemaphoreExceptionHandler(properties.problemDetails().retryAfter(), name -> {
            SemaphoreRegistry semaphores = registry.getIfAvailable();
            try {
                return semaphores == null ? null : semaphores.settingsOf(name).whenUnavailable();
            } catch (IllegalArgumentException notASemaphoreName) {
                // an exception an application built with a name of its own: the answer goes out without the mode
                return null;
            }
        });
    }

    /** A servlet application with Spring MVC, or a reactive one with WebFlux: where an advice answers. */
    static final class OnMvcOrWebFlux extends AnyNestedCondition {

        OnMvcOrWebFlux() {
            super(ConfigurationPhase.PARSE_CONFIGURATION);
        }

        @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
        @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
        static final class Mvc {
        }

        @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
        @ConditionalOnClass(name = "org.springframework.web.reactive.DispatcherHandler")
        static final class WebFlux {
        }
    }

    /** {@value #ENABLED} is true or not set; a value that is neither true nor false stops the start-up. */
    static final class OnProblemDetailsEnabled extends BoundBooleanCondition {

        OnProblemDetailsEnabled() {
            super(ENABLED, true);
        }
    }
}
