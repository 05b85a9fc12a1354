package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.core.SemaphoreListener;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.internal.DefaultSemaphoreRegistry;
import io.github.redissemaphore.core.redis.SemaphoreScripts;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.scheduling.TaskScheduler;

/**
 * Auto-configures distributed semaphores on the application's {@link RedisConnectionFactory}: the
 * five Lua scripts as {@link RedisScript} beans, the {@link SemaphoreRegistry} configured from
 * {@link DistributedSemaphoreProperties}, and the {@link DistributedSemaphoreAspect} behind
 * {@code @DistributedSemaphore}. Each bean backs off when the application defines its own.
 *
 * <p>The registry's life is the context's: it is a {@code SmartLifecycle} that stops after the web
 * server has finished its in-flight requests and before the Redis connection factory closes, so
 * waiting callers are woken with an exception and every held permit is given back to Redis.
 *
 * <p>The registry schedules its renewal ticks on a small scheduler of its own, unless the
 * application provides a {@link TaskScheduler} bean named {@value #TASK_SCHEDULER_BEAN_NAME}. It
 * deliberately does not borrow the scheduler of {@code @EnableScheduling}: that one has a single
 * thread by default, shared with the application's scheduled jobs (a long job would delay lease
 * renewals until leases are lost), and it stops taking tasks as soon as the context starts
 * closing, while in-flight calls still hold permits that need renewing.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnClass({SemaphoreRegistry.class, RedisConnectionFactory.class})
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "distributed-semaphore.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DistributedSemaphoreProperties.class)
@SuppressWarnings("rawtypes")
public final class DistributedSemaphoreAutoConfiguration {

    /** Name of a {@link TaskScheduler} bean the registry should use instead of its own. */
    public static final String TASK_SCHEDULER_BEAN_NAME = "distributedSemaphoreTaskScheduler";

    /** Spring Boot's application executor, which runs asynchronous calls whose permit came after a wait. */
    static final String APPLICATION_TASK_EXECUTOR_BEAN_NAME = "applicationTaskExecutor";

    @Bean
    @ConditionalOnMissingBean(name = "semaphoreAcquireScript")
    public RedisScript<List> semaphoreAcquireScript() {
        return SemaphoreScripts.script("acquire");
    }

    @Bean
    @ConditionalOnMissingBean(name = "semaphoreReleaseScript")
    public RedisScript<List> semaphoreReleaseScript() {
        return SemaphoreScripts.script("release");
    }

    @Bean
    @ConditionalOnMissingBean(name = "semaphoreRenewScript")
    public RedisScript<List> semaphoreRenewScript() {
        return SemaphoreScripts.script("renew");
    }

    @Bean
    @ConditionalOnMissingBean(name = "semaphoreCancelScript")
    public RedisScript<List> semaphoreCancelScript() {
        return SemaphoreScripts.script("cancel");
    }

    @Bean
    @ConditionalOnMissingBean(name = "semaphoreStateScript")
    public RedisScript<List> semaphoreStateScript() {
        return SemaphoreScripts.script("state");
    }

    @Bean
    @ConditionalOnMissingBean
    public SemaphoreScripts semaphoreScripts(@Qualifier("semaphoreAcquireScript") RedisScript<List> acquire,
                                             @Qualifier("semaphoreReleaseScript") RedisScript<List> release,
                                             @Qualifier("semaphoreRenewScript") RedisScript<List> renew,
                                             @Qualifier("semaphoreCancelScript") RedisScript<List> cancel,
                                             @Qualifier("semaphoreStateScript") RedisScript<List> state) {
        return new SemaphoreScripts(acquire, release, renew, cancel, state);
    }

    /**
     * The registry, started (its inbox subscribed) when created. Declared as
     * {@link SemaphoreRegistry} so that any registry of the application's own replaces it; the
     * instance is a {@link DefaultSemaphoreRegistry}, whose {@code SmartLifecycle} the context
     * drives.
     */
    @Bean
    @ConditionalOnMissingBean(SemaphoreRegistry.class)
    public SemaphoreRegistry semaphoreRegistry(RedisConnectionFactory connectionFactory,
                                               DistributedSemaphoreProperties properties, SemaphoreScripts scripts,
                                               ObjectProvider<SemaphoreListener> listeners,
                                               @Qualifier(TASK_SCHEDULER_BEAN_NAME)
                                               ObjectProvider<TaskScheduler> taskScheduler) {
        SemaphoreRegistry.Builder builder = SemaphoreRegistry.builder(connectionFactory)
                .keyPrefix(properties.keyPrefix())
                .defaults(properties.defaults().toSettings())
                .scripts(scripts)
                .waiterHeartbeat(properties.waiterHeartbeat())
                .waiterTick(properties.waiterTick());
        properties.configuredSettings().forEach(builder::configure);
        listeners.orderedStream().forEach(builder::listener);
        taskScheduler.ifAvailable(builder::taskScheduler);
        return builder.build();
    }

    /** The aspect, when AspectJ's weaver (for {@code @Aspect} support) is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.aspectj.weaver.Advice")
    static class AspectConfiguration {

        @Bean
        @ConditionalOnMissingBean
        DistributedSemaphoreAspect distributedSemaphoreAspect(SemaphoreRegistry registry, Environment environment,
                                                              DistributedSemaphoreProperties properties,
                                                              @Qualifier(APPLICATION_TASK_EXECUTOR_BEAN_NAME)
                                                              ObjectProvider<Executor> executor) {
            return new DistributedSemaphoreAspect(registry, environment,
                    executor.getIfAvailable(ForkJoinPool::commonPool), properties.aspectOrder());
        }
    }
}
