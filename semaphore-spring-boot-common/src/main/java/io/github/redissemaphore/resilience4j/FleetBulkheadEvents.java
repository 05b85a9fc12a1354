package io.github.redissemaphore.resilience4j;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.event.BulkheadEvent;
import io.github.resilience4j.bulkhead.event.BulkheadOnCallFinishedEvent;
import io.github.resilience4j.bulkhead.event.BulkheadOnCallPermittedEvent;
import io.github.resilience4j.bulkhead.event.BulkheadOnCallRejectedEvent;
import io.github.resilience4j.core.EventConsumer;
import io.github.resilience4j.core.EventProcessor;

import java.util.function.Supplier;

/**
 * The event publisher of a {@link FleetBulkhead}: Resilience4j's own event types, to Resilience4j's
 * consumers (its {@code bulkheadevents} endpoint, an application's {@code onCallRejected}), published
 * by the JVM whose call it was. An event is made only when someone listens, as Resilience4j does.
 */
final class FleetBulkheadEvents extends EventProcessor<BulkheadEvent> implements Bulkhead.EventPublisher {

    @Override
    public Bulkhead.EventPublisher onCallRejected(EventConsumer<BulkheadOnCallRejectedEvent> consumer) {
        registerConsumer(BulkheadOnCallRejectedEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public Bulkhead.EventPublisher onCallPermitted(EventConsumer<BulkheadOnCallPermittedEvent> consumer) {
        registerConsumer(BulkheadOnCallPermittedEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public Bulkhead.EventPublisher onCallFinished(EventConsumer<BulkheadOnCallFinishedEvent> consumer) {
        registerConsumer(BulkheadOnCallFinishedEvent.class.getName(), consumer);
        return this;
    }

    /** Publishes the event {@code event} makes, if anyone listens. */
    void publish(Supplier<? extends BulkheadEvent> event) {
        if (hasConsumers()) {
            processEvent(event.get());
        }
    }
}
