package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The method of the same bean called instead of a guarded method that got no permit: same
 * parameters, optionally followed by one that takes the {@link SemaphoreRejectedException}, and a
 * result the guarded method could return. The fallback of a Kotlin {@code suspend fun} is one too
 * (the rejection then comes before the hidden continuation), called through a publisher as Spring
 * AOP calls the guarded one. Looked up once per guarded method.
 */
final class FallbackMethod {

    private final Method method;
    private final boolean takesRejection;
    private final boolean suspending;

    private FallbackMethod(Method method, boolean takesRejection, boolean suspending) {
        ReflectionUtils.makeAccessible(method);
        this.method = method;
        this.takesRejection = takesRejection;
        this.suspending = suspending;
    }

    /**
     * @return the fallback called {@code name} for {@code guarded}, preferring the one that takes
     *         the rejection when both exist
     * @throws IllegalArgumentException when there is no such method or it returns the wrong type
     */
    static FallbackMethod find(String name, Method guarded, Class<?> targetClass) {
        boolean suspending = KotlinDetector.isSuspendingFunction(guarded);
        Class<?>[] parameters = declaredParameters(guarded, suspending);
        List<Method> candidates = new ArrayList<>();
        ReflectionUtils.doWithMethods(targetClass, candidates::add, method -> method.getName().equals(name)
                && !method.isBridge() && KotlinDetector.isSuspendingFunction(method) == suspending);
        FallbackMethod found = null;
        for (Method candidate : candidates) {
            Class<?>[] types = declaredParameters(candidate, suspending);
            if (types.length == parameters.length + 1
                    && Arrays.equals(types, 0, parameters.length, parameters, 0, parameters.length)
                    && types[parameters.length].isAssignableFrom(SemaphoreRejectedException.class)) {
                found = new FallbackMethod(candidate, true, suspending);
                break;
            }
            if (found == null && Arrays.equals(types, parameters)) {
                found = new FallbackMethod(candidate, false, suspending);
            }
        }
        if (found == null) {
            throw new IllegalArgumentException("fallbackMethod '" + name + "' not found: " + targetClass.getName()
                    + " has no " + (suspending ? "suspend function " : "method ") + signature(name, parameters, "")
                    + " or " + signature(name, parameters, SemaphoreRejectedException.class.getSimpleName()));
        }
        if (!ClassUtils.isAssignable(guarded.getReturnType(), found.method.getReturnType())) {
            throw new IllegalArgumentException("fallbackMethod '" + name + "' returns "
                    + found.method.getReturnType().getName() + ", which the guarded method cannot return in place of "
                    + guarded.getReturnType().getName());
        }
        return found;
    }

    /** The parameters as the source declares them: a suspend function's continuation is hidden. */
    private static Class<?>[] declaredParameters(Method method, boolean suspending) {
        Class<?>[] types = method.getParameterTypes();
        return suspending ? Arrays.copyOf(types, types.length - 1) : types;
    }

    /**
     * Calls the fallback on the target bean with the guarded call's arguments.
     *
     * @return its result; for a suspend function, a publisher of it that runs the function in the
     *         caller's coroutine context when subscribed
     */
    @Nullable Object invoke(Object target, Object[] args, SemaphoreRejectedException rejection) throws Throwable {
        Object[] arguments = args;
        if (takesRejection) {
            arguments = Arrays.copyOf(args, args.length + 1);
            // a suspend function's continuation stays last
            int at = suspending ? args.length - 1 : args.length;
            arguments[at] = rejection;
            if (suspending) {
                arguments[args.length] = args[args.length - 1];
            }
        }
        // as Spring AOP calls the guarded method: for a suspend function through a publisher
        return AopUtils.invokeJoinpointUsingReflection(target, method, arguments);
    }

    private static String signature(String name, Class<?>[] parameters, String extra) {
        List<String> names = new ArrayList<>();
        for (Class<?> parameter : parameters) {
            names.add(parameter.getSimpleName());
        }
        if (!extra.isEmpty()) {
            names.add(extra);
        }
        return name + "(" + String.join(", ", names) + ")";
    }
}
