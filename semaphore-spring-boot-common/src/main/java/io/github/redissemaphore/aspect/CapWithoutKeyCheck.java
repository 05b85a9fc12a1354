package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.aspect.CapWithoutKeyException.Unkeyed;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.util.function.SingletonSupplier;

/**
 * Refuses, as each bean is created, a {@code @DistributedSemaphore} without a {@code key} on a
 * semaphore whose keys share a cap ({@code total-permits}): such a semaphore is used per key only
 * ({@code SemaphoreSettings.totalPermits()}). The bean's creation fails with an exception naming
 * each such method, its semaphore and the property that sets the cap, and the start-up with it,
 * rather than the first call.
 */
public final class CapWithoutKeyCheck implements BeanPostProcessor {

    private final Supplier<Map<String, String>> capped;
    private final PropertyResolver placeholders;

    /**
     * @param capped       the semaphores with a shared cap, each with the property that sets it as the
     *                     user writes it; asked once, when the first annotated bean is checked
     * @param placeholders resolves the {@code ${...}} of a semaphore name, as the aspect does
     */
    public CapWithoutKeyCheck(Supplier<Map<String, String>> capped, PropertyResolver placeholders) {
        this.capped = SingletonSupplier.of(capped);
        this.placeholders = placeholders;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> targetClass = UnguardableMethods.toCheck(bean);
        if (targetClass == null) {
            return bean;
        }
        List<Unkeyed> unkeyed = new ArrayList<>();
        for (Method method : UnguardableMethods.annotated(targetClass)) {
            Unkeyed problem = problem(method, targetClass);
            if (problem != null) {
                unkeyed.add(problem);
            }
        }
        if (!unkeyed.isEmpty()) {
            throw new CapWithoutKeyException(beanName, targetClass, unkeyed);
        }
        return bean;
    }

    private @Nullable Unkeyed problem(Method method, Class<?> targetClass) {
        // the method's own annotation wins over the class's, as in the aspect
        DistributedSemaphore annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedSemaphore.class);
        if (annotation == null) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(targetClass, DistributedSemaphore.class);
        }
        if (annotation == null || !annotation.key().isBlank()) {
            return null;
        }
        // lenient: a placeholder that does not resolve is the aspect's to report, with the attribute
        String semaphore = placeholders.resolvePlaceholders(annotation.value());
        String property = capped.get().get(semaphore);
        return property != null ? new Unkeyed(method, semaphore, property) : null;
    }
}
