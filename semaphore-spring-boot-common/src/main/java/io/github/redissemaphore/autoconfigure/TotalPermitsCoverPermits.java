package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties.Semaphore;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

/**
 * A semaphore's {@code total-permits} must be at least its {@code permits}: the cap over all keys
 * together cannot be below what one key alone may hold. Its {@code permits} may come from
 * {@code defaults}, so the rule is checked on the whole properties, not on the semaphore; the
 * core's {@link SemaphoreSettings} checks the same rule, and checking it while binding reports it
 * on the property, with the values as written, before the registry exists.
 */
@Constraint(validatedBy = TotalPermitsCoverPermits.Validator.class)
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@interface TotalPermitsCoverPermits {

    /** Not used: the validator writes a message that names the permits property and its value. */
    String message() default "must be at least permits";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** Reports each violation on {@code semaphores[<name>].totalPermits}, the value the user sets for the cap. */
    final class Validator implements ConstraintValidator<TotalPermitsCoverPermits, DistributedSemaphoreProperties> {

        @Override
        public boolean isValid(DistributedSemaphoreProperties properties, ConstraintValidatorContext context) {
            boolean valid = true;
            for (var entry : properties.semaphores().entrySet()) {
                Semaphore semaphore = entry.getValue();
                Integer total = semaphore.totalPermits();
                boolean own = semaphore.permits() != null;
                int permits = own ? semaphore.permits() : properties.defaults().permits();
                // a value out of its own range is reported by its own constraint, once
                if (total == null || !inRange(total) || !inRange(permits) || total >= permits) {
                    continue;
                }
                if (valid) {
                    context.disableDefaultConstraintViolation();
                    valid = false;
                }
                String permitsProperty = own
                        ? SettingDescription.ofSemaphore(entry.getKey(), "permits")
                        : DistributedSemaphoreProperties.PREFIX + ".defaults.permits";
                context.buildConstraintViolationWithTemplate(literal("must be at least " + permitsProperty + " ("
                                + permits + "), what each key alone may hold"))
                        .addPropertyNode("semaphores")
                        .addPropertyNode("totalPermits").inIterable().atKey(entry.getKey())
                        .addConstraintViolation();
            }
            return valid;
        }

        /** The message as it is: a semaphore name is no message parameter or expression. */
        static String literal(String message) {
            return message.replaceAll("([\\\\{}$])", "\\\\$1");
        }

        /** @return whether {@code permits} is a number of permits its own constraint lets through */
        static boolean inRange(int permits) {
            return permits >= 1 && permits <= SemaphoreSettings.MAX_PERMITS;
        }
    }
}
