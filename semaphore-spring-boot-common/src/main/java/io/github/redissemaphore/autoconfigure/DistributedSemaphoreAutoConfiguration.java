package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.aspect.CapWithoutKeyCheck;
import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.aspect.UnguardableMethodsCheck;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties.UnguardableMethodsMode;
import io.github.redissemaphore.core.SemaphoreListener;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.observation.SemaphoreHoldObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreObservationConvention;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.util.function.SingletonSupplier;

/**
 * Auto-configures distributed semaphores on the application's {@link RedisConnectionFactory}: the
 * {@link SemaphoreRegistry} configured from {@link DistributedSemaphoreProperties} (it loads the
 * seven Lua scripts itself, once), and the {@link DistributedSemaphoreAspect} behind
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
@AutoConfiguration(afterName = {
        // Boot 4 and Boot 3 names of the Redis auto-configuration: this class serves both lines
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration"})
@ConditionalOnClass({SemaphoreRegistry.class, RedisConnectionFactory.class})
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
@Conditional(OnEnabledCondition.class)
@EnableConfigurationProperties(DistributedSemaphoreProperties.class)
public final class DistributedSemaphoreAutoConfiguration {

    /** Name of a {@link TaskScheduler} bean the registry should use instead of its own. */
    public static final String TASK_SCHEDULER_BEAN_NAME = "distributedSemaphoreTaskScheduler";

    /** Spring Boot's application executor, which runs asynchronous calls whose permit came after a wait. */
    static final String APPLICATION_TASK_EXECUTOR_BEAN_NAME = "applicationTaskExecutor";

    /**
     * The registry, started (its inbox subscribed) when created. Declared as
     * {@link SemaphoreRegistry} so that any registry of the application's own replaces it; the
     * instance is a {@code SmartLifecycle}, which the context
     * drives. Its acquisitions and leases are observed in the application's
     * {@link ObservationRegistry}, if it has one, with the conventions of its
     * {@link SemaphoreObservationConvention} and {@link SemaphoreHoldObservationConvention} beans;
     * without one, in the registry that makes the {@code semaphore.acquire} timer for the starter's
     * metrics ({@link AcquireTimerObservations}), when those are on.
     */
    @Bean
    @ConditionalOnMissingBean(SemaphoreRegistry.class)
    public SemaphoreRegistry semaphoreRegistry(RedisConnectionFactory connectionFactory,
                                               DistributedSemaphoreProperties properties,
                                               ObjectProvider<SemaphoreListener> listeners,
                                               @Qualifier(TASK_SCHEDULER_BEAN_NAME)
                                               ObjectProvider<TaskScheduler> taskScheduler,
                                               ObjectProvider<ObservationRegistry> observationRegistry,
                                               ObjectProvider<SemaphoreObservationConvention> observationConvention,
                                               ObjectProvider<SemaphoreHoldObservationConvention>
                                                       holdObservationConvention,
                                               ObjectProvider<AcquireTimerObservations> acquireTimerObservations) {
        SemaphoreRegistry.Builder builder = SemaphoreRegistry.builder(connectionFactory)
                .keyPrefix(properties.keyPrefix())
                .redisTimeout(properties.redisTimeout())
                .defaults(properties.defaults().toSettings())
                .waiterHeartbeat(properties.waiterHeartbeat())
                .waiterTick(properties.waiterTick());
        properties.configuredSettings().forEach(builder::configure);
        listeners.orderedStream().forEach(builder::listener);
        taskScheduler.ifAvailable(builder::taskScheduler);
        ObservationRegistry observations = observationRegistry.getIfUnique();
        if (observations != null) {
            builder.observationRegistry(observations);
        } else {
            acquireTimerObservations.ifAvailable(timer -> builder.observationRegistry(timer.registry()));
        }
        observationConvention.ifUnique(builder::observationConvention);
        holdObservationConvention.ifUnique(builder::holdObservationConvention);
        return builder.build();
    }

    /**
     * The aspect, when AspectJ's weaver (for {@code @Aspect} support) is on the class path. Spring
     * creates it while it sorts the advice of the first bean it proxies, to ask for its order: so
     * it gets its registry and executor lazily, and its order straight from the environment, and
     * nothing else is created that early. Were the registry created here, a wrong property would
     * surface as "Advisor sorting failed", a false hint, instead of as the property it is.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.aspectj.weaver.Advice")
    static class AspectConfiguration {

        private static final String ASPECT_ORDER = DistributedSemaphoreProperties.PREFIX + ".aspect-order";
        private static final String UNGUARDABLE_METHODS =
                DistributedSemaphoreProperties.PREFIX + ".unguardable-methods";
        private static final String SEMAPHORES = DistributedSemaphoreProperties.PREFIX + ".semaphores";

        @Bean
        @ConditionalOnMissingBean
        DistributedSemaphoreAspect distributedSemaphoreAspect(ObjectProvider<SemaphoreRegistry> registry,
                                                              Environment environment,
                                                              @Qualifier(APPLICATION_TASK_EXECUTOR_BEAN_NAME)
                                                              ObjectProvider<Executor> executor) {
            SingletonSupplier<Executor> asyncExecutor =
                    SingletonSupplier.of(() -> executor.getIfAvailable(ForkJoinPool::commonPool));
            return new DistributedSemaphoreAspect(registry::getObject, environment,
                    command -> asyncExecutor.obtain().execute(command), aspectOrder(environment));
        }

        /**
         * Refuses {@code @DistributedSemaphore} methods no call can reach, as their beans are created;
         * {@value #UNGUARDABLE_METHODS}{@code =warn} logs them instead. Read straight from the
         * environment, as post-processors are created before any other bean: a value that is
         * neither stops the start-up with the report on that property.
         */
        @Bean
        static UnguardableMethodsCheck unguardableMethodsCheck(Environment environment) {
            UnguardableMethodsMode mode = Binder.get(environment)
                    .bind(UNGUARDABLE_METHODS, UnguardableMethodsMode.class).orElse(UnguardableMethodsMode.FAIL);
            return new UnguardableMethodsCheck(mode == UnguardableMethodsMode.FAIL);
        }

        /**
         * Refuses {@code @DistributedSemaphore} without a key on a semaphore with
         * {@value #SEMAPHORES}{@code .<name>.total-permits}, as their beans are created.
         */
        @Bean
        static CapWithoutKeyCheck capWithoutKeyCheck(Environment environment) {
            return new CapWithoutKeyCheck(() -> capped(environment), environment);
        }

        /**
         * Read straight from the environment, like the other post-processor's setting: were
         * {@link DistributedSemaphoreProperties} bound while an application bean is created, a
         * wrong property would be reported as that bean's failure. A value that cannot be bound
         * leaves nothing to check: binding the properties reports it a moment later.
         *
         * @return each semaphore with a shared cap, with its total-permits property as the user writes it
         */
        private static Map<String, String> capped(Environment environment) {
            Map<String, DistributedSemaphoreProperties.Semaphore> semaphores;
            try {
                semaphores = Binder.get(environment).bind(SEMAPHORES,
                        Bindable.mapOf(String.class, DistributedSemaphoreProperties.Semaphore.class)).orElse(Map.of());
            } catch (BindException e) {
                return Map.of();
            }
            Map<String, String> capped = new LinkedHashMap<>();
            semaphores.forEach((name, semaphore) -> {
                // 0 or less is no cap but a wrong value, which binding the properties reports as such
                if (semaphore.totalPermits() != null && semaphore.totalPermits() > 0) {
                    capped.put(name, SettingDescription.ofSemaphore(name, "total-permits"));
                }
            });
            return capped;
        }

        /**
         * A value that is not a number falls back to the default here: binding
         * {@link DistributedSemaphoreProperties} reports it a moment later, with the others.
         */
        private static int aspectOrder(Environment environment) {
            try {
                return Binder.get(environment).bind(ASPECT_ORDER, Integer.class)
                        .orElse(DistributedSemaphoreProperties.DEFAULT_ASPECT_ORDER);
            } catch (BindException e) {
                return DistributedSemaphoreProperties.DEFAULT_ASPECT_ORDER;
            }
        }
    }
}
