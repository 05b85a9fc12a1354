package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties.Semaphore;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import org.jspecify.annotations.Nullable;

/**
 * A {@code rate-limit} comes with its {@code rate-period}, and a period with its limit: both or
 * neither, in {@code defaults} or per semaphore (either may come from {@code defaults}), and no
 * rate on a semaphore with {@code total-permits}. Checked on the whole properties while binding, so
 * the start-up fails naming the property as written, before the registry exists; the core's
 * {@link io.github.redissemaphore.core.SemaphoreSettings} checks the same rules.
 */
@Constraint(validatedBy = RateComesWithPeriod.Validator.class)
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@interface RateComesWithPeriod {

    /** Not used: the validator writes a message that names the other property. */
    String message() default "must come with rate-period";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** Reports each violation on the property the user wrote, naming the one that is missing. */
    final class Validator implements ConstraintValidator<RateComesWithPeriod, DistributedSemaphoreProperties> {

        private static final String DEFAULTS = DistributedSemaphoreProperties.PREFIX + ".defaults.";

        @Override
        public boolean isValid(DistributedSemaphoreProperties properties, ConstraintValidatorContext context) {
            context.disableDefaultConstraintViolation();
            var defaults = properties.defaults();
            boolean valid = pair(context, defaults.rateLimit(), defaults.ratePeriod(), DEFAULTS, null);
            for (var entry : properties.semaphores().entrySet()) {
                Semaphore semaphore = entry.getValue();
                String own = SettingDescription.ofSemaphore(entry.getKey(), "");
                Integer limit = semaphore.rateLimit() != null ? semaphore.rateLimit() : defaults.rateLimit();
                Duration period = semaphore.ratePeriod() != null ? semaphore.ratePeriod() : defaults.ratePeriod();
                boolean ownPair = semaphore.rateLimit() != null || semaphore.ratePeriod() != null;
                if (ownPair) {
                    // (the one missing is named where the user would set it: beside the other, unless the defaults have it)
                    valid &= pair(context, limit, period,
                            semaphore.rateLimit() == null && defaults.rateLimit() != null ? DEFAULTS : own,
                            entry.getKey(), semaphore.ratePeriod() == null && defaults.ratePeriod() != null ? DEFAULTS : own);
                }
                if (limit != null && semaphore.totalPermits() != null) {
                    valid = false;
                    violation(context, "is not supported with " + own + "total-permits (a capped semaphore) yet: set"
                            + " one or the other", entry.getKey(), "rateLimit");
                }
            }
            return valid;
        }

        private static boolean pair(ConstraintValidatorContext context, @Nullable Integer limit,
                                    @Nullable Duration period, String where, @Nullable String name) {
            return pair(context, limit, period, where, name, where);
        }

        /** Both or neither: the one set names the one missing. */
        private static boolean pair(ConstraintValidatorContext context, @Nullable Integer limit,
                                    @Nullable Duration period, String limitWhere, @Nullable String name,
                                    String periodWhere) {
            if ((limit == null) == (period == null)) {
                return true;
            }
            if (limit != null) {
                violation(context, "must be set together with " + periodWhere + "rate-period, its window (both or"
                        + " neither)", name, "rateLimit");
            } else {
                violation(context, "must be set together with " + limitWhere + "rate-limit, the grants per window"
                        + " (both or neither)", name, "ratePeriod");
            }
            return false;
        }

        private static void violation(ConstraintValidatorContext context, String message, @Nullable String name,
                                      String property) {
            var builder = context.buildConstraintViolationWithTemplate(literal(message));
            if (name == null) {
                builder.addPropertyNode("defaults").addPropertyNode(property).addConstraintViolation();
            } else {
                builder.addPropertyNode("semaphores").addPropertyNode(property).inIterable().atKey(name)
                        .addConstraintViolation();
            }
        }

        /** The message as it is: a semaphore name is no message parameter or expression. */
        private static String literal(String message) {
            return message.replaceAll("([\\\\{}$])", "\\\\$1");
        }
    }
}
