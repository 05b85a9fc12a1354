package io.github.redissemaphore.aspect;

import io.github.redissemaphore.aspect.UnguardableMethods.Unguardable;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A bean has {@code @DistributedSemaphore} methods the aspect can never guard. The message names
 * each method and why; {@link UnguardableMethodsFailureAnalyzer} turns it into a start-up failure
 * report.
 */
final class UnguardableMethodsException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The property that turns the failure into a WARN, as the user sets it. */
    static final String SWITCH = "distributed-semaphore.unguardable-methods=warn";

    private final String headline;
    private final transient List<Unguardable> methods;

    UnguardableMethodsException(String beanName, Class<?> type, List<Unguardable> methods) {
        this(headline(beanName, type, methods), methods);
    }

    private UnguardableMethodsException(String headline, List<Unguardable> methods) {
        super(headline + ": " + methods.stream().map(method -> method.describe() + ": " + method.reason())
                .collect(Collectors.joining("; ")) + ".");
        this.headline = headline;
        this.methods = List.copyOf(methods);
    }

    private static String headline(String beanName, Class<?> type, List<Unguardable> methods) {
        return "@DistributedSemaphore cannot guard " + (methods.size() == 1 ? "a method" : methods.size() + " methods")
                + " of bean '" + beanName + "' (" + type.getName() + ")";
    }

    /** @return which bean, without the methods: "@DistributedSemaphore cannot guard 2 methods of bean 'x' (...)" */
    String headline() {
        return headline;
    }

    /** @return each method and why */
    List<Unguardable> methods() {
        return methods;
    }
}
