package io.github.redissemaphore.autoconfigure.aot;

import io.github.redissemaphore.annotation.DistributedSemaphore;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * For each bean of the application that uses {@code @DistributedSemaphore}, registers for
 * reflective invocation in a GraalVM native image what the aspect calls reflectively: the guarded
 * methods (Spring AOP calls the target method by reflection once the advice proceeds) and every
 * method named as a {@code fallbackMethod}, wherever in the class hierarchy it is declared.
 *
 * <p>Registers a little more than the aspect may call (every overload of a fallback's name, every
 * public method of an annotated class): the aspect picks among these at run time, and a hint too
 * many costs nothing while one too few fails the call.
 */
class GuardedMethodsAotProcessor implements BeanRegistrationAotProcessor {

    @Override
    public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
        Set<Method> methods = methodsToInvoke(registeredBean.getBeanClass());
        if (methods.isEmpty()) {
            return null;
        }
        return (generationContext, code) -> {
            ReflectionHints hints = generationContext.getRuntimeHints().reflection();
            methods.forEach(method -> hints.registerMethod(method, ExecutableMode.INVOKE));
        };
    }

    /** @return the guarded methods of {@code beanClass} and their fallbacks; empty if it uses no semaphore */
    static Set<Method> methodsToInvoke(Class<?> beanClass) {
        DistributedSemaphore onClass = annotationOn(beanClass);
        Set<String> fallbacks = new HashSet<>();
        Set<Method> methods = new LinkedHashSet<>();
        if (onClass != null) {
            fallbacks.add(onClass.fallbackMethod());
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(beanClass,
                ReflectionUtils.USER_DECLARED_METHODS)) {
            DistributedSemaphore onMethod = annotationOn(method);
            if (onMethod != null) {
                methods.add(method);
                fallbacks.add(onMethod.fallbackMethod());
            } else if (onClass != null && Modifier.isPublic(method.getModifiers())) {
                methods.add(method);
            }
        }
        fallbacks.remove("");
        if (!fallbacks.isEmpty()) {
            ReflectionUtils.doWithMethods(beanClass, methods::add,
                    method -> fallbacks.contains(method.getName()) && !method.isBridge());
        }
        return methods;
    }

    /** As the aspect reads it: also from an overridden or implemented method, a superclass or an interface. */
    private static @Nullable DistributedSemaphore annotationOn(AnnotatedElement element) {
        return AnnotatedElementUtils.findMergedAnnotation(element, DistributedSemaphore.class);
    }
}
