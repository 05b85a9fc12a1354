package io.github.redissemaphore.concurrencylimit;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.stream.Collectors;

import org.springframework.util.ReflectionUtils;

/**
 * Names the semaphore of a {@code @ConcurrencyLimit}, as Spring names the throttle in its messages:
 * {@code com.acme.ReportService.generate} for an annotated method, {@code com.acme.ReportService}
 * for an annotated class (one limit for all its methods together, as Spring's). So two methods never
 * share a semaphore by accident: the class is named in full, and where the class has overloads of the
 * method, the parameter types are added ({@code com.acme.ReportService.generate(String,int)}). Every
 * JVM of the fleet runs the same code, so every JVM finds the same name. Configure one under
 * {@code distributed-semaphore.semaphores[com.acme.ReportService.generate]} (brackets, as the name
 * has dots).
 */
final class SemaphoreNaming {

    private SemaphoreNaming() {
    }

    /** @return the semaphore of {@code @ConcurrencyLimit} on {@code method} of {@code userClass} */
    static String ofMethod(Class<?> userClass, Method method) {
        String name = userClass.getName() + "." + method.getName();
        long sameName = Arrays.stream(ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS))
                .filter(other -> other.getName().equals(method.getName())).count();
        if (sameName <= 1) {
            return name;
        }
        return name + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                .collect(Collectors.joining(",", "(", ")"));
    }

    /** @return the semaphore of {@code @ConcurrencyLimit} on the class {@code userClass} */
    static String ofClass(Class<?> userClass) {
        return userClass.getName();
    }
}
