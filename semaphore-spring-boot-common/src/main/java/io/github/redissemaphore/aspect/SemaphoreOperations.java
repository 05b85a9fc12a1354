package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreNames;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ReflectionUtils;

/**
 * Reads {@code @DistributedSemaphore} from a method or its class and turns it into a checked
 * {@link SemaphoreOperation}, once per method and target class. Every mistake in the annotation is
 * reported here, on the first call, with the attribute and the method it is on.
 */
final class SemaphoreOperations {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private final Supplier<SemaphoreRegistry> registry;
    private final PropertyResolver placeholders;
    private final List<ResultGuard> guards;
    private final Map<MethodClassKey, Optional<SemaphoreOperation>> cache = new ConcurrentHashMap<>();

    /**
     * @param guards tried in order, the first that supports a return type guards it
     */
    SemaphoreOperations(Supplier<SemaphoreRegistry> registry, PropertyResolver placeholders, List<ResultGuard> guards) {
        this.registry = registry;
        this.placeholders = placeholders;
        this.guards = List.copyOf(guards);
    }

    /** @return the operation of {@code method} called on an instance of {@code targetClass}, or null if none */
    @Nullable SemaphoreOperation find(Method method, Class<?> targetClass) {
        return cache.computeIfAbsent(new MethodClassKey(method, targetClass),
                key -> Optional.ofNullable(create(method, targetClass))).orElse(null);
    }

    private @Nullable SemaphoreOperation create(Method interfaceOrMethod, Class<?> targetClass) {
        Method method = AopUtils.getMostSpecificMethod(interfaceOrMethod, targetClass);
        DistributedSemaphore annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedSemaphore.class);
        if (annotation == null && !ReflectionUtils.isObjectMethod(method)) {
            // class level: every public method, but not toString() and the like
            annotation = AnnotatedElementUtils.findMergedAnnotation(targetClass, DistributedSemaphore.class);
        }
        if (annotation == null) {
            return null;
        }
        String name = name(annotation, method);
        SemaphoreSettings settings = registry.get().settingsOf(name);
        int permits = annotation.permits();
        try {
            settings.checkRequest(permits);
        } catch (IllegalArgumentException e) {
            throw invalid(method, "permits", e.getMessage());
        }
        Expression key = key(annotation, method);
        Duration waitTime = waitTime(annotation, method, settings);
        FallbackMethod fallback = fallback(annotation, method, targetClass);
        ResultGuard guard = guard(method);
        // held from now on: each call uses it as it is, its settings are not handed back and compared
        RedisSemaphore semaphore = key == null ? registry.get().semaphore(name) : null;
        return new SemaphoreOperation(method, name, key, semaphore, permits, waitTime, fallback, guard);
    }

    private String name(DistributedSemaphore annotation, Method method) {
        try {
            return SemaphoreNames.check("name", placeholders.resolveRequiredPlaceholders(annotation.value()));
        } catch (IllegalArgumentException e) {
            throw invalid(method, "value", e.getMessage());
        }
    }

    private static @Nullable Expression key(DistributedSemaphore annotation, Method method) {
        if (annotation.key().isBlank()) {
            return null;
        }
        try {
            return PARSER.parseExpression(annotation.key());
        } catch (ParseException e) {
            throw invalid(method, "key", "'" + annotation.key() + "' is not a SpEL expression: " + e.getMessage());
        }
    }

    private static Duration waitTime(DistributedSemaphore annotation, Method method, SemaphoreSettings settings) {
        String text = annotation.waitTime().trim();
        if (text.isEmpty()) {
            return settings.waitTime();
        }
        Duration waitTime;
        try {
            waitTime = DurationStyle.detectAndParse(text);
        } catch (IllegalArgumentException e) {
            throw invalid(method, "waitTime", "'" + text + "' is not a duration; use e.g. 500ms, 2s, 1m or PT2S");
        }
        try {
            SemaphoreSettings.checkWait("waitTime", waitTime);
        } catch (IllegalArgumentException e) {
            throw invalid(method, "waitTime", e.getMessage());
        }
        return waitTime;
    }

    private static @Nullable FallbackMethod fallback(DistributedSemaphore annotation, Method method, Class<?> targetClass) {
        if (annotation.fallbackMethod().isBlank()) {
            return null;
        }
        try {
            return FallbackMethod.find(annotation.fallbackMethod(), method, targetClass);
        } catch (IllegalArgumentException e) {
            throw invalid(method, "fallbackMethod", e.getMessage());
        }
    }

    private ResultGuard guard(Method method) {
        for (ResultGuard guard : guards) {
            if (guard.supports(method)) {
                return guard;
            }
        }
        String result = KotlinDetector.isSuspendingFunction(method) ? "suspend function"
                : method.getReturnType().getName();
        throw invalid(method, "value", "cannot hold a permit until a " + result + " completes; "
                + ResultGuards.SUPPORTED);
    }

    private static IllegalArgumentException invalid(Method method, String attribute, @Nullable String problem) {
        return new IllegalArgumentException("Invalid " + attribute + " of @DistributedSemaphore on "
                + describe(method) + ": " + problem);
    }

    /** @return {@code SimpleClassName.method(ParameterTypes)}, for messages */
    static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "("
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", "))
                + ")";
    }
}
