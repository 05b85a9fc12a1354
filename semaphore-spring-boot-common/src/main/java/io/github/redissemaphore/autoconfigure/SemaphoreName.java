package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreNames;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;

/**
 * The annotated string must be a valid semaphore name or key prefix, by the rules of
 * {@link SemaphoreNames}: 1 to 200 characters, no '{', '}', whitespace or control characters.
 * Null is valid (use {@code @NotNull} to forbid it).
 */
@Documented
@Constraint(validatedBy = SemaphoreNameValidator.class)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE_USE})
@Retention(RetentionPolicy.RUNTIME)
public @interface SemaphoreName {

    /** Used only when the rules give no message of their own. */
    String message() default "must be 1 to 200 characters without '{', '}', whitespace or control characters";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
