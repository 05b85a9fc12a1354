package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreNames;

import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;

/**
 * Checks {@link SemaphoreName} with the core's own rules, so the configuration and the API can
 * never disagree about what a valid name is, and reports the core's message, which says which
 * rule the value breaks.
 */
public final class SemaphoreNameValidator implements ConstraintValidator<SemaphoreName, String> {

    /** The core names the value in its messages; here the property path already does. */
    private static final String SUBJECT = "value";

    @Override
    public boolean isValid(String value, ConstraintValidatorContext context) {
        if (value == null) {
            return true;
        }
        try {
            SemaphoreNames.check(SUBJECT, value);
            return true;
        } catch (IllegalArgumentException e) {
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate(escape(String.valueOf(e.getMessage()))).addConstraintViolation();
            return false;
        }
    }

    /**
     * The message quotes the configured value, so it must not be read as a message template
     * (braces and '$' would be interpolated: expression-language injection).
     */
    private static String escape(String message) {
        StringBuilder escaped = new StringBuilder(message.length() + 8);
        for (char c : message.toCharArray()) {
            if (c == '{' || c == '}' || c == '$' || c == '\\') {
                escaped.append('\\');
            }
            escaped.append(c);
        }
        return escaped.toString();
    }
}
