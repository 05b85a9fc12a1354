package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.actuate.LimitRequestCheck;
import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.util.Set;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The {@link SemaphoresEndpoint} when Spring Boot Actuator is present and the endpoint is
 * available (its access not {@code none} and it is exposed), with the {@link LimitRequestCheck} of
 * its write operation. Read-only by default; see the endpoint for how to allow forced releases.
 */
@AutoConfiguration(after = DistributedSemaphoreAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class, SemaphoreRegistry.class})
@ConditionalOnBean(SemaphoreRegistry.class)
@Conditional(OnEnabledCondition.class)
@ConditionalOnAvailableEndpoint(SemaphoresEndpoint.class)
public final class DistributedSemaphoreEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public SemaphoresEndpoint semaphoresEndpoint(SemaphoreRegistry registry,
                                                 ObjectProvider<DistributedSemaphoreProperties> properties) {
        DistributedSemaphoreProperties configured = properties.getIfAvailable();
        return new SemaphoresEndpoint(registry, configured == null ? Set.of() : configured.semaphores().keySet());
    }

    /**
     * The write operation's {@code "limit"} key (a cap's {@code "totalLimit"}) is required: a
     * request without it must not clear the limit. Which names are caps the endpoint in use says,
     * asked per request: it may be the application's own.
     */
    @Bean
    @ConditionalOnMissingBean
    public LimitRequestCheck semaphoresLimitRequestCheck(ObjectProvider<SemaphoresEndpoint> endpoint) {
        return new LimitRequestCheck(name -> {
            SemaphoresEndpoint inUse = endpoint.getIfUnique();
            return inUse != null && inUse.isCap(name);
        });
    }
}
