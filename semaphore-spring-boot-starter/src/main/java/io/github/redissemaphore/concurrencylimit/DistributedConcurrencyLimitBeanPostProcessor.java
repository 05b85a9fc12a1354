package io.github.redissemaphore.concurrencylimit;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.lang.reflect.Method;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.resilience.annotation.ConcurrencyLimitBeanPostProcessor;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Spring's {@link ConcurrencyLimitBeanPostProcessor} with our advice in place of Spring's: the same
 * pointcut (an annotated method, or any method of an annotated class), the same place among the
 * advisors (before the existing ones), the same proxying; each call guarded by a distributed
 * semaphore ({@link FleetConcurrencyLimitInterceptor}) instead of a per-JVM throttle. Registered
 * under Spring's own bean name, {@value #BEAN_NAME}, in place of the one {@code @EnableResilientMethods}
 * registers, so a method is never guarded twice, and with or without that annotation.
 *
 * <p>As each advised bean is created, its annotated methods are resolved, so a limit that is not
 * valid, or that {@code distributed-semaphore.semaphores} contradicts, stops the start-up.
 */
public class DistributedConcurrencyLimitBeanPostProcessor extends ConcurrencyLimitBeanPostProcessor
        implements EnvironmentAware {

    /** Spring's name of the {@code @ConcurrencyLimit} post-processor, which {@code @EnableResilientMethods} uses. */
    public static final String BEAN_NAME = "org.springframework.resilience.annotation.internalConcurrencyLimitProcessor";

    private static final long serialVersionUID = 1L;
    private static final String SEMAPHORES = "distributed-semaphore.semaphores";

    private transient @Nullable StringValueResolver placeholders;
    private transient @Nullable Environment environment;
    private transient @Nullable BeanFactory beanFactory;
    private final transient LimitedMethods methods;

    /** Our advice in place of Spring's, on Spring's pointcut. */
    public DistributedConcurrencyLimitBeanPostProcessor() {
        this.methods = new LimitedMethods(this::resolvePlaceholders, this::configured);
        Pointcut onClass = new AnnotationMatchingPointcut(ConcurrencyLimit.class, true);
        Pointcut onMethod = new AnnotationMatchingPointcut(null, ConcurrencyLimit.class, true);
        this.advisor = new DefaultPointcutAdvisor(new ComposablePointcut(onClass).union(onMethod),
                new FleetConcurrencyLimitInterceptor(methods, this::registry));
    }

    @Override
    public void setEmbeddedValueResolver(StringValueResolver resolver) {
        super.setEmbeddedValueResolver(resolver);
        this.placeholders = resolver;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beanFactory = beanFactory;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Object advised = super.postProcessAfterInitialization(bean, beanName);
        if (advised != bean || isEligible(bean, beanName)) {
            Class<?> userClass = ClassUtils.getUserClass(bean.getClass());
            for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS)) {
                methods.of(userClass, method);
            }
        }
        return advised;
    }

    private @Nullable String resolvePlaceholders(String value) {
        return placeholders != null ? placeholders.resolveStringValue(value) : value;
    }

    /**
     * Read straight from the environment, as the other checks that run while beans are created read
     * it: a value that cannot be bound leaves nothing to compare, and binding the properties reports
     * it a moment later, as the property it is.
     */
    private Map<String, DistributedSemaphoreProperties.Semaphore> configured() {
        if (environment == null) {
            return Map.of();
        }
        try {
            return Binder.get(environment).bind(SEMAPHORES,
                    Bindable.mapOf(String.class, DistributedSemaphoreProperties.Semaphore.class)).orElse(Map.of());
        } catch (BindException e) {
            return Map.of();
        }
    }

    private SemaphoreRegistry registry() {
        Assert.state(beanFactory != null, "No BeanFactory to find the SemaphoreRegistry in");
        return beanFactory.getBean(SemaphoreRegistry.class);
    }
}
