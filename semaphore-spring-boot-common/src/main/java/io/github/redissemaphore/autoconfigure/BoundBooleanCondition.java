package io.github.redissemaphore.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches on a boolean property of the starter (true when it is not set), read as
 * {@link DistributedSemaphoreProperties} binds it. Unlike {@code @ConditionalOnBooleanProperty},
 * which takes any value but "true" for false, a value that is neither stops the start-up: a typo
 * such as {@code flase} must not switch something off unnoticed. The binder's failure names the
 * property and its value, and {@link InvalidPropertiesFailureAnalyzer} reports it as it reports
 * every other property; reading it the binder's way also keeps the condition and the properties
 * in agreement on what counts as true ({@code on}, {@code yes}, {@code 1} as well).
 */
@Order(Ordered.HIGHEST_PRECEDENCE + 40) // where Boot's property conditions run: after class checks, before bean checks
abstract class BoundBooleanCondition extends SpringBootCondition {

    private final String property;
    private final boolean matchWhen;

    /**
     * @param property  the full name, e.g. {@code distributed-semaphore.enabled}
     * @param matchWhen the value on which the condition matches
     */
    BoundBooleanCondition(String property, boolean matchWhen) {
        this.property = property;
        this.matchWhen = matchWhen;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ConditionMessage.Builder message = ConditionMessage.forCondition(property);
        boolean value = Binder.get(context.getEnvironment()).bind(property, Boolean.class).orElse(true);
        String because = value ? "is true or not set" : "is false";
        return value == matchWhen ? ConditionOutcome.match(message.because(because))
                : ConditionOutcome.noMatch(message.because(because));
    }
}
