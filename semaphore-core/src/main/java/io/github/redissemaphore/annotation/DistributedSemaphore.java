package io.github.redissemaphore.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits how many calls of the annotated method (or of every public method of the annotated
 * class) run at once across every JVM sharing the Redis. A permit is taken before the call and
 * given back after it, also when it throws; for {@code CompletionStage} and Reactor results it is
 * held until the result completes. Nested calls on the same thread for the same semaphore take
 * no second permit.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface DistributedSemaphore {

    /** The semaphore name; {@code ${...}} placeholders are resolved. */
    String value();

    /**
     * A SpEL expression over the method arguments ({@code #tenantId}, {@code #p0}, {@code #a0});
     * when set, the semaphore is {@code "<value>:<key>"} (one per key), with the settings of
     * {@link #value()}.
     */
    String key() default "";

    /** How many permits one call takes. */
    int permits() default 1;

    /** How long to wait for a permit, e.g. {@code "2s"} or {@code "500ms"}; empty: the configured wait time. */
    String waitTime() default "";

    /**
     * A method of the same bean, taking the same arguments (optionally plus a trailing
     * {@code SemaphoreRejectedException}), called instead when no permit comes within the wait.
     * Empty: the {@code SemaphoreRejectedException} is thrown.
     */
    String fallbackMethod() default "";
}
