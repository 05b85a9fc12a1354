package io.github.redissemaphore.aspect;

import java.lang.reflect.Method;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A bean has {@code @DistributedSemaphore} methods without a {@code key} on a semaphore whose keys
 * share a cap. The message names each method, its semaphore and the property of the cap;
 * {@link CapWithoutKeyFailureAnalyzer} turns it into a start-up failure report.
 */
final class CapWithoutKeyException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String headline;
    private final transient List<Unkeyed> methods;

    /**
     * One method without a key on a capped semaphore.
     *
     * @param method    the method, as declared
     * @param semaphore the semaphore name, placeholders resolved
     * @param property  the property that sets the cap, as the user writes it
     */
    record Unkeyed(Method method, String semaphore, String property) {

        /** @return {@code com.example.Reports.export(String)}, for messages */
        String describe() {
            return UnguardableMethods.describe(method);
        }
    }

    CapWithoutKeyException(String beanName, Class<?> type, List<Unkeyed> methods) {
        this(headline(beanName, type, methods), methods);
    }

    private CapWithoutKeyException(String headline, List<Unkeyed> methods) {
        super(headline + ": " + methods.stream().map(method -> method.describe() + " uses \"" + method.semaphore()
                + "\", capped by " + method.property()).collect(Collectors.joining("; ")) + ".");
        this.headline = headline;
        this.methods = List.copyOf(methods);
    }

    private static String headline(String beanName, Class<?> type, List<Unkeyed> methods) {
        return "@DistributedSemaphore without a key uses a semaphore whose keys share a cap, on "
                + (methods.size() == 1 ? "a method" : methods.size() + " methods") + " of bean '" + beanName
                + "' (" + type.getName() + ")";
    }

    /** @return which bean, without the methods */
    String headline() {
        return headline;
    }

    /** @return each method, its semaphore and the property of the cap */
    List<Unkeyed> methods() {
        return methods;
    }
}
