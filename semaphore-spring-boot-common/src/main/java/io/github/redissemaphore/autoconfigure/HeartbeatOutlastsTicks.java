package io.github.redissemaphore.autoconfigure;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

/**
 * {@code waiter-heartbeat} must be at least twice {@code waiter-tick}: a waiter's heartbeat is
 * refreshed once per tick, so a shorter heartbeat would drop live waiters from the queue. The
 * registry's builder checks the same rule; checking it while binding reports it on the property,
 * with the value as written, instead of as a failure to create the registry.
 */
@Constraint(validatedBy = HeartbeatOutlastsTicks.Validator.class)
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@interface HeartbeatOutlastsTicks {

    /** Not used: the validator writes a message that quotes the tick. */
    String message() default "must be at least twice waiter-tick";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** Reports the violation on {@code waiterHeartbeat}, the value that has to give way. */
    final class Validator implements ConstraintValidator<HeartbeatOutlastsTicks, DistributedSemaphoreProperties> {

        @Override
        public boolean isValid(DistributedSemaphoreProperties properties, ConstraintValidatorContext context) {
            Duration heartbeat = properties.waiterHeartbeat();
            Duration tick = properties.waiterTick();
            if (heartbeat == null || tick == null || heartbeat.compareTo(tick.multipliedBy(2)) >= 0) {
                return true;
            }
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate("must be at least twice " + DistributedSemaphoreProperties.PREFIX
                            + ".waiter-tick (" + SettingDescription.format(tick) + ")")
                    .addPropertyNode("waiterHeartbeat").addConstraintViolation();
            return false;
        }
    }
}
