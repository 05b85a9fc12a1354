package io.github.redissemaphore.concurrencylimit;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.autoconfigure.dropin.ConflictingLimitException;
import io.github.redissemaphore.autoconfigure.dropin.SemaphoreProperty;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.util.StringUtils;

/**
 * Resolves, once per method, what guards a {@code @ConcurrencyLimit} method: the annotation on the
 * method, else on its class (as Spring looks them up); {@code limit} or {@code limitString} as the
 * permits; the settings of {@code distributed-semaphore.semaphores.<name>} for the rest.
 *
 * <p>How long BLOCK waits: the semaphore's own {@code wait-time} when its entry sets one, else 24
 * hours, the longest a semaphore waits. Spring's BLOCK waits without bound, so a call that waited
 * before still waits now, where {@code distributed-semaphore.defaults.wait-time} (0 unless set) would
 * have turned every BLOCK into a REJECT; the bound is there so that no call waits forever. REJECT
 * never waits.
 */
final class LimitedMethods {

    /** Spring's "no limit": the method runs unguarded, as Spring runs it. */
    private static final int UNBOUNDED = -1;

    private final Map<Key, Optional<LimitedMethod>> resolved = new ConcurrentHashMap<>();
    private final Function<String, @Nullable String> placeholders;
    private final Supplier<Map<String, DistributedSemaphoreProperties.Semaphore>> configured;

    /**
     * @param placeholders resolves {@code ${...}} in {@code limitString}
     * @param configured   the entries under {@code distributed-semaphore.semaphores}, as written
     */
    LimitedMethods(Function<String, @Nullable String> placeholders,
                   Supplier<Map<String, DistributedSemaphoreProperties.Semaphore>> configured) {
        this.placeholders = placeholders;
        this.configured = configured;
    }

    /**
     * @param method    the most specific method of {@code userClass}
     * @return what guards it; empty when it has no annotation, or no limit ({@code -1})
     * @throws ConflictingLimitException when its semaphore's entry sets other permits than its limit
     * @throws IllegalStateException     when its limit is not valid
     */
    Optional<LimitedMethod> of(Class<?> userClass, Method method) {
        return resolved.computeIfAbsent(new Key(userClass, method), key -> resolve(userClass, method));
    }

    private Optional<LimitedMethod> resolve(Class<?> userClass, Method method) {
        @Nullable ConcurrencyLimit annotation = AnnotatedElementUtils.findMergedAnnotation(method, ConcurrencyLimit.class);
        String name;
        if (annotation != null) {
            name = SemaphoreNaming.ofMethod(userClass, method);
        } else {
            annotation = AnnotatedElementUtils.findMergedAnnotation(userClass, ConcurrencyLimit.class);
            if (annotation == null) {
                return Optional.empty();
            }
            name = SemaphoreNaming.ofClass(userClass);
        }
        int limit = limit(annotation);
        if (limit == UNBOUNDED) {
            return Optional.empty();
        }
        if (limit < 1) {
            throw new IllegalStateException(annotation + " on " + name + " must be configured with a valid limit:"
                    + " 1 or more for a fleet-wide limit, or -1 for none");
        }
        DistributedSemaphoreProperties.@Nullable Semaphore entry = configured.get().get(name);
        if (entry != null && entry.permits() != null && entry.permits() != limit) {
            throw new ConflictingLimitException(name, "@ConcurrencyLimit(limit) of " + name + " = " + limit,
                    SemaphoreProperty.of(name, "permits") + " = " + entry.permits());
        }
        Duration wait = Duration.ZERO;
        if (annotation.policy() == ConcurrencyLimit.ThrottlePolicy.BLOCK) {
            wait = entry != null && entry.waitTime() != null ? entry.waitTime() : SemaphoreSettings.MAX_DURATION;
        }
        return Optional.of(new LimitedMethod(name, limit, annotation.policy(), wait));
    }

    private int limit(ConcurrencyLimit annotation) {
        String written = annotation.limitString();
        if (StringUtils.hasText(written)) {
            @Nullable String value = placeholders.apply(written);
            if (StringUtils.hasText(value)) {
                try {
                    return Integer.parseInt(value.trim());
                } catch (NumberFormatException e) {
                    throw new IllegalStateException(annotation + ": limitString '" + written + "' is '" + value
                            + "', not a number", e);
                }
            }
        }
        return annotation.limit();
    }

    /** A method as a class has it: an inherited method is named after each class that inherits it. */
    private record Key(Class<?> userClass, Method method) {
    }
}
