package io.github.redissemaphore.aspect;

import io.github.redissemaphore.aspect.UnguardableMethods.Unguardable;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.Advisor;
import org.springframework.aop.aspectj.AspectJAopUtils;
import org.springframework.aop.aspectj.AspectJPrecedenceInformation;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;
import org.jspecify.annotations.Nullable;

/**
 * Refuses, as each bean is created, a {@code @DistributedSemaphore} the aspect can never apply
 * (see {@link UnguardableMethods}): the bean's creation fails with an exception naming each such
 * method and why, and the start-up with it; or, when the application chooses to start anyway, a
 * WARN says the same, once per class. Runs after every post-processor that proxies a bean (it is
 * the last of the ordered ones), so it sees the bean as callers get it.
 */
public final class UnguardableMethodsCheck implements BeanPostProcessor, BeanFactoryAware, Ordered {

    private static final Log logger = LogFactory.getLog(UnguardableMethodsCheck.class);

    private final boolean failStartUp;
    private final Set<Class<?>> warned = ConcurrentHashMap.newKeySet();
    private @Nullable ListableBeanFactory beanFactory;

    /** @param failStartUp true to fail a bean with an unguardable method, false to log a WARN and go on */
    public UnguardableMethodsCheck(boolean failStartUp) {
        this.failStartUp = failStartUp;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ListableBeanFactory listable ? listable : null;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> targetClass = UnguardableMethods.toCheck(bean);
        if (targetClass == null) {
            return bean;
        }
        List<Unguardable> unguardable = UnguardableMethods.of(bean, targetClass, this::isAspect);
        if (unguardable.isEmpty()) {
            return bean;
        }
        UnguardableMethodsException problem = new UnguardableMethodsException(beanName, targetClass, unguardable);
        if (failStartUp) {
            throw problem;
        }
        if (warned.add(targetClass)) {
            logger.warn(problem.getMessage() + (unguardable.size() == 1 ? " It runs" : " They run")
                    + " unguarded, as " + UnguardableMethodsException.SWITCH + " allows.");
        }
        return bean;
    }

    /** Whether {@code advisor} is the advice of a DistributedSemaphoreAspect bean, ours or the application's. */
    private boolean isAspect(Advisor advisor) {
        AspectJPrecedenceInformation aspect = AspectJAopUtils.getAspectJPrecedenceInformationFor(advisor);
        if (aspect == null || beanFactory == null) {
            return false;
        }
        Class<?> type = beanFactory.getType(aspect.getAspectName(), false);
        return type != null && DistributedSemaphoreAspect.class.isAssignableFrom(type);
    }

    /** Last of the ordered post-processors: after the auto-proxy creator, which runs first. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
