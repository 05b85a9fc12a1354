package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.scope.ScopedObject;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.jspecify.annotations.Nullable;

/**
 * Finds the {@code @DistributedSemaphore} methods of a bean that the aspect can never guard,
 * because no call to them passes through the bean's proxy: such a method would run without a
 * permit, silently. What is found is certain, never a guess: a private or static method, a final
 * method of a class-based (CGLIB) proxy, a method an interface-based (JDK) proxy does not expose,
 * a bean the aspect does not advise at all, and a final class no proxy can subclass. What cannot
 * be seen from the bean (a call from the bean to itself, an object made with {@code new}) is not
 * looked for.
 *
 * <p>With an annotation on the class, only its public methods are guarded (the aspect's
 * pointcut), so only a public method that cannot be is reported there.
 */
final class UnguardableMethods {

    /** Kotlin classes and functions are final unless opened: there is no final to remove. */
    private static final String OPEN_IN_KOTLIN = "declare the class and the function open, or let the kotlin-spring"
            + " compiler plugin open them (it opens classes annotated with @Component, @Service and the like, and"
            + " their functions)";

    /**
     * One method the aspect cannot guard.
     *
     * @param method the method, as declared
     * @param reason why no call to it reaches the aspect
     * @param remedy what makes it guardable
     */
    record Unguardable(Method method, String reason, String remedy) {

        /** @return {@code com.example.Reports.generate(String)}, for messages */
        String describe() {
            return UnguardableMethods.describe(method);
        }
    }

    private UnguardableMethods() {
    }

    /** @return whether {@code type} may carry the annotation at all: a cheap test before looking at each method */
    static boolean isCandidate(Class<?> type) {
        return AnnotationUtils.isCandidateClass(type, DistributedSemaphore.class);
    }

    /**
     * @return the class behind {@code bean} whose annotated methods a start-up check looks at, or
     *         null when there is none to look at: a scoped proxy stands for its target, a bean of
     *         its own that is checked as such, and a class that cannot carry the annotation is skipped
     */
    static @Nullable Class<?> toCheck(Object bean) {
        if (bean instanceof ScopedObject) {
            return null;
        }
        Class<?> targetClass = AopProxyUtils.ultimateTargetClass(bean);
        return isCandidate(targetClass) ? targetClass : null;
    }

    /**
     * @param bean        the bean as the context hands it out, after every post-processor that proxies
     * @param targetClass the class of the object behind any proxy
     * @param isAspect    whether an advisor of a proxy is the {@code DistributedSemaphoreAspect}'s advice
     * @return the annotated methods of {@code targetClass} that no call through {@code bean} can reach the aspect by
     */
    static List<Unguardable> of(Object bean, Class<?> targetClass, Predicate<Advisor> isAspect) {
        List<Unguardable> found = new ArrayList<>();
        boolean onClass = AnnotatedElementUtils.hasAnnotation(targetClass, DistributedSemaphore.class);
        boolean advised = bean instanceof Advised proxy && Arrays.stream(proxy.getAdvisors()).anyMatch(isAspect);
        for (Method method : annotated(targetClass, onClass)) {
            Unguardable problem = problem(method, bean, advised);
            if (problem != null) {
                found.add(problem);
            }
        }
        return found;
    }

    /** @return every annotated method of {@code type}, a final class no class-based proxy can subclass */
    static List<Unguardable> ofFinalClass(Class<?> type) {
        boolean onClass = AnnotatedElementUtils.hasAnnotation(type, DistributedSemaphore.class);
        return annotated(type, onClass).stream().map(method -> new Unguardable(method,
                "its class is final: a class-based (CGLIB) proxy cannot subclass it",
                KotlinDetector.isKotlinType(type) ? OPEN_IN_KOTLIN
                        : "remove final from " + type.getSimpleName() + " (and from the method)")).toList();
    }

    /** @return {@code com.example.Reports.generate(String)}, for messages */
    static String describe(Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName() + "("
                + String.join(", ", Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList())
                + ")";
    }

    /**
     * @return the methods of {@code type} the aspect would guard if every call passed through the
     *         proxy: those annotated, and the public ones of an annotated class
     */
    static List<Method> annotated(Class<?> type) {
        return annotated(type, AnnotatedElementUtils.hasAnnotation(type, DistributedSemaphore.class));
    }

    private static List<Method> annotated(Class<?> type, boolean onClass) {
        List<Method> methods = new ArrayList<>();
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            int modifiers = method.getModifiers();
            if (isAnnotated(method) || onClass && Modifier.isPublic(modifiers) && !Modifier.isStatic(modifiers)) {
                methods.add(method);
            }
        }
        return methods;
    }

    private static boolean isAnnotated(Method method) {
        return AnnotatedElementUtils.hasAnnotation(method, DistributedSemaphore.class);
    }

    private static @Nullable Unguardable problem(Method method, Object bean, boolean advised) {
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers)) {
            return new Unguardable(method, "it is static: a proxy intercepts calls on the bean, never a static call",
                    "make it an instance method and call it on the bean");
        }
        if (Modifier.isPrivate(modifiers)) {
            return new Unguardable(method, "it is private: calls to it never go through the bean's proxy",
                    "make it public and call it on the bean from another bean");
        }
        if (!advised) {
            return new Unguardable(method, "the bean is not advised by the DistributedSemaphore aspect: it was "
                    + "created before the aspect could proxy it (a dependency of a BeanPostProcessor or "
                    + "BeanFactoryPostProcessor), or auto-proxying is off (spring.aop.auto=false)",
                    "let Spring create the bean after its post-processors (inject it lazily where they need it), "
                            + "and keep spring.aop.auto on");
        }
        // A public method of an annotated class that an interface-based proxy does not expose cannot be
        // called through the bean at all: that is the proxy's choice, not a guard gone missing.
        if (AopUtils.isJdkDynamicProxy(bean) && isAnnotated(method) && !exposes((Advised) bean, method)) {
            return new Unguardable(method, "the bean is proxied through its interfaces (a JDK proxy) and none of "
                    + "them declares the method: no caller can reach it through the proxy",
                    "declare the method on an interface the bean implements, or use class-based proxies "
                            + "(spring.aop.proxy-target-class=true, Spring Boot's default)");
        }
        if (!AopUtils.isJdkDynamicProxy(bean) && Modifier.isFinal(modifiers)) {
            return new Unguardable(method, "it is final: a class-based (CGLIB) proxy cannot override it",
                    KotlinDetector.isKotlinType(method.getDeclaringClass()) ? OPEN_IN_KOTLIN
                            : "remove final from the method");
        }
        return null;
    }

    private static boolean exposes(Advised proxy, Method method) {
        return Arrays.stream(proxy.getProxiedInterfaces())
                .anyMatch(type -> ClassUtils.hasMethod(type, method.getName(), method.getParameterTypes()));
    }
}
