package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The method of the same bean called instead of a guarded method that got no permit: same
 * parameters, optionally followed by one that takes the {@link SemaphoreRejectedException}, and a
 * result the guarded method could return. Looked up once per guarded method.
 */
final class FallbackMethod {

    private final Method method;
    private final boolean takesRejection;

    private FallbackMethod(Method method, boolean takesRejection) {
        ReflectionUtils.makeAccessible(method);
        this.method = method;
        this.takesRejection = takesRejection;
    }

    /**
     * @return the fallback called {@code name} for {@code guarded}, preferring the one that takes
     *         the rejection when both exist
     * @throws IllegalArgumentException when there is no such method or it returns the wrong type
     */
    static FallbackMethod find(String name, Method guarded, Class<?> targetClass) {
        Class<?>[] parameters = guarded.getParameterTypes();
        List<Method> candidates = new ArrayList<>();
        ReflectionUtils.doWithMethods(targetClass, candidates::add,
                method -> method.getName().equals(name) && !method.isBridge());
        FallbackMethod found = null;
        for (Method candidate : candidates) {
            Class<?>[] types = candidate.getParameterTypes();
            if (types.length == parameters.length + 1
                    && Arrays.equals(types, 0, parameters.length, parameters, 0, parameters.length)
                    && types[parameters.length].isAssignableFrom(SemaphoreRejectedException.class)) {
                found = new FallbackMethod(candidate, true);
                break;
            }
            if (found == null && Arrays.equals(types, parameters)) {
                found = new FallbackMethod(candidate, false);
            }
        }
        if (found == null) {
            throw new IllegalArgumentException("fallbackMethod '" + name + "' not found: " + targetClass.getName()
                    + " has no method " + signature(name, parameters, "") + " or "
                    + signature(name, parameters, SemaphoreRejectedException.class.getSimpleName()));
        }
        if (!ClassUtils.isAssignable(guarded.getReturnType(), found.method.getReturnType())) {
            throw new IllegalArgumentException("fallbackMethod '" + name + "' returns "
                    + found.method.getReturnType().getName() + ", which the guarded method cannot return in place of "
                    + guarded.getReturnType().getName());
        }
        return found;
    }

    /** Calls the fallback on the target bean with the guarded call's arguments. */
    Object invoke(Object target, Object[] args, SemaphoreRejectedException rejection) throws Throwable {
        Object[] arguments = args;
        if (takesRejection) {
            arguments = Arrays.copyOf(args, args.length + 1);
            arguments[args.length] = rejection;
        }
        try {
            return method.invoke(target, arguments);
        } catch (InvocationTargetException e) {
            throw e.getTargetException();
        }
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
