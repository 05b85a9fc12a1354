package io.github.redissemaphore.aspect;

import io.github.redissemaphore.aspect.UnguardableMethods.Unguardable;

import java.lang.reflect.Modifier;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.aop.framework.AopConfigException;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.jspecify.annotations.Nullable;

/**
 * Reports {@code @DistributedSemaphore} methods the aspect can never guard: those
 * {@link UnguardableMethodsCheck} refused, and those of a final class, for which Spring fails to
 * make the proxy before the check could see the bean ("Could not generate CGLIB subclass"), a
 * message that says nothing of the annotation, nor of Kotlin, whose classes are final by default.
 */
final class UnguardableMethodsFailureAnalyzer implements FailureAnalyzer {

    private static final String NL = System.lineSeparator();

    private final @Nullable BeanFactory beanFactory;

    /** @param beanFactory where the class of a bean that could not be proxied is looked up; null without a context */
    UnguardableMethodsFailureAnalyzer(@Nullable BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        String beanName = null;
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof UnguardableMethodsException unguardable) {
                return analysis(unguardable, true, failure);
            }
            if (cause instanceof BeanCreationException creation && creation.getBeanName() != null) {
                beanName = creation.getBeanName();
            }
            if (cause instanceof AopConfigException && beanName != null) {
                return finalClass(beanName, failure);
            }
        }
        return null;
    }

    private @Nullable FailureAnalysis finalClass(String beanName, Throwable failure) {
        Class<?> type = beanFactory != null && beanFactory.containsBean(beanName) ? beanFactory.getType(beanName, false)
                : null;
        if (type == null || !Modifier.isFinal(type.getModifiers()) || !UnguardableMethods.isCandidate(type)) {
            return null;
        }
        List<Unguardable> methods = UnguardableMethods.ofFinalClass(type);
        if (methods.isEmpty()) {
            return null;
        }
        // no switch helps here: Spring cannot make the proxy, so the bean cannot be created at all
        return analysis(new UnguardableMethodsException(beanName, type, methods), false, failure);
    }

    private static FailureAnalysis analysis(UnguardableMethodsException unguardable, boolean canWarn,
                                            Throwable failure) {
        List<Unguardable> methods = unguardable.methods();
        StringBuilder description = new StringBuilder(unguardable.headline()).append(": calls to ")
                .append(methods.size() == 1 ? "it" : "them").append(" would run without a permit.").append(NL);
        for (Unguardable method : methods) {
            description.append(NL).append("    Method: ").append(method.describe()).append(NL)
                    .append("    Reason: ").append(method.reason()).append(NL);
        }
        String action = methods.stream().map(method -> method.describe() + ": " + method.remedy() + ".")
                .distinct().collect(Collectors.joining(NL));
        if (canWarn) {
            action += NL + "Or, to start with " + (methods.size() == 1 ? "it" : "them") + " unguarded, set "
                    + UnguardableMethodsException.SWITCH + ".";
        }
        return new FailureAnalysis(description.toString(), action, failure);
    }
}
