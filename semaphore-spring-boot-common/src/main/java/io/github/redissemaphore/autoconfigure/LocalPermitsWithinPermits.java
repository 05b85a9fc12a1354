package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties.Defaults;
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

import static io.github.redissemaphore.autoconfigure.TotalPermitsCoverPermits.Validator.inRange;
import static io.github.redissemaphore.autoconfigure.TotalPermitsCoverPermits.Validator.literal;

/**
 * A semaphore's {@code local-permits}, the share one instance grants on its own while Redis cannot
 * be reached, must be at most its {@code permits}: more would let one instance alone exceed the
 * limit. Either may come from {@code defaults}, so the rule is checked on the whole properties;
 * the core's {@link SemaphoreSettings} checks the same rule, and checking it while binding reports
 * it on the property the user wrote, with the values as written, before the registry exists.
 */
@Constraint(validatedBy = LocalPermitsWithinPermits.Validator.class)
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@interface LocalPermitsWithinPermits {

    /** Not used: the validator writes a message that names the permits property and its value. */
    String message() default "must be at most permits";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /**
     * Reports each violation on the {@code local-permits} the user wrote: the semaphore's own
     * ({@code semaphores[<name>].localPermits}), else that of the defaults it inherits.
     */
    final class Validator implements ConstraintValidator<LocalPermitsWithinPermits, DistributedSemaphoreProperties> {

        private static final String DEFAULTS = DistributedSemaphoreProperties.PREFIX + ".defaults.";

        @Override
        public boolean isValid(DistributedSemaphoreProperties properties, ConstraintValidatorContext context) {
            Defaults defaults = properties.defaults();
            boolean valid = true;
            if (exceeds(defaults.localPermits(), defaults.permits())) {
                violation(context, "must be at most " + DEFAULTS + "permits (" + defaults.permits() + ")")
                        .addPropertyNode("defaults").addPropertyNode("localPermits").addConstraintViolation();
                valid = false;
            }
            for (var entry : properties.semaphores().entrySet()) {
                Semaphore semaphore = entry.getValue();
                boolean ownPermits = semaphore.permits() != null;
                int permits = ownPermits ? semaphore.permits() : defaults.permits();
                String permitsProperty = ownPermits ? SettingDescription.ofSemaphore(entry.getKey(), "permits")
                        : DEFAULTS + "permits";
                if (semaphore.localPermits() != null) {
                    if (exceeds(semaphore.localPermits(), permits)) {
                        violation(context, "must be at most " + permitsProperty + " (" + permits + ")")
                                .addPropertyNode("semaphores")
                                .addPropertyNode("localPermits").inIterable().atKey(entry.getKey())
                                .addConstraintViolation();
                        valid = false;
                    }
                } else if (ownPermits && exceeds(defaults.localPermits(), permits)) {
                    // the defaults' share, inherited by a semaphore with fewer permits of its own
                    violation(context, "must be at most " + permitsProperty + " (" + permits
                            + "), which takes its local-permits from the defaults; or set "
                            + SettingDescription.ofSemaphore(entry.getKey(), "local-permits"))
                            .addPropertyNode("defaults").addPropertyNode("localPermits").addConstraintViolation();
                    valid = false;
                }
            }
            return valid;
        }

        /** A value out of its own range is reported by its own constraint, once: only in-range values count. */
        private static boolean exceeds(Integer localPermits, int permits) {
            return localPermits != null && inRange(localPermits) && inRange(permits) && localPermits > permits;
        }

        /** @return the builder of a violation with {@code message}, instead of the default one */
        private static ConstraintValidatorContext.ConstraintViolationBuilder violation(
                ConstraintValidatorContext context, String message) {
            context.disableDefaultConstraintViolation();
            return context.buildConstraintViolationWithTemplate(literal(message));
        }
    }
}
