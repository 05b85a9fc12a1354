package io.github.redissemaphore.autoconfigure.dropin;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when a switch of the starter that is off by default is set to true. Read the binder's
 * way, as {@code DistributedSemaphoreProperties} reads it, so a value that is neither true nor false
 * ({@code flase}) stops the start-up instead of leaving the switch off unnoticed; Boot's
 * {@code @ConditionalOnBooleanProperty} would take it for false.
 */
@Order(Ordered.HIGHEST_PRECEDENCE + 40) // where Boot's property conditions run: after class checks, before bean checks
public abstract class OptInCondition extends SpringBootCondition {

    private final String property;

    /** @param property the switch's full name, e.g. {@code distributed-semaphore.resilience4j.enabled} */
    protected OptInCondition(String property) {
        this.property = property;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ConditionMessage.Builder message = ConditionMessage.forCondition(property);
        boolean on = Binder.get(context.getEnvironment()).bind(property, Boolean.class).orElse(false);
        return on ? ConditionOutcome.match(message.because("is true"))
                : ConditionOutcome.noMatch(message.because("is false or not set"));
    }

    /** Matches when {@value #PROPERTY} is true. */
    public static final class OnResilience4j extends OptInCondition {

        /** The switch. */
        public static final String PROPERTY = "distributed-semaphore.resilience4j.enabled";

        OnResilience4j() {
            super(PROPERTY);
        }
    }

    /** Matches when {@value #PROPERTY} is true. */
    public static final class OnConcurrencyLimit extends OptInCondition {

        /** The switch. */
        public static final String PROPERTY = "distributed-semaphore.concurrency-limit.enabled";

        OnConcurrencyLimit() {
            super(PROPERTY);
        }
    }
}
