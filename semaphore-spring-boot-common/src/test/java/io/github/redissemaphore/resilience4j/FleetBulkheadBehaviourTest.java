package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.bulkhead.annotation.Bulkhead;
import io.github.resilience4j.bulkhead.event.BulkheadEvent;
import io.github.resilience4j.circuitbreaker.annotation.CircuitBreaker;
import io.github.resilience4j.consumer.EventConsumerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.retry.annotation.Retry;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What a Resilience4j user sees of a bulkhead backed by a distributed semaphore, with one instance
 * holding its only permit and the other calling: Resilience4j's refusal for each result type, its
 * events and meters with the fleet's figures, and its aspect order around {@code @Retry} and
 * {@code @CircuitBreaker}.
 */
@RedisTest
class FleetBulkheadBehaviourTest {

    private final ApplicationContextRunner instance;
    private final ExecutorService callers = Executors.newFixedThreadPool(4);

    FleetBulkheadBehaviourTest(RedisServer server) {
        this.instance = Resilience4jContexts.on(server)
                .withPropertyValues(Resilience4jContexts.ON,
                        "resilience4j.bulkhead.instances.busy.max-concurrent-calls=1",
                        "resilience4j.bulkhead.instances.busy.max-wait-duration=0",
                        "resilience4j.retry.instances.patient.max-attempts=600",
                        "resilience4j.retry.instances.patient.wait-duration=50ms",
                        "resilience4j.retry.instances.patient.retry-exceptions="
                                + BulkheadFullException.class.getName())
                .withBean(Busy.class);
    }

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    @Test
    void theOtherInstanceIsRefusedAsResilience4jRefuses() {
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = holdTheOnlyPermit(first, gate);
            Busy busy = second.getBean(Busy.class);

            assertThatThrownBy(() -> busy.work(null)).isInstanceOf(BulkheadFullException.class)
                    .hasMessageContaining("Bulkhead 'busy' is full");
            assertThatThrownBy(() -> busy.workAsync().join()).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(BulkheadFullException.class);
            assertThatThrownBy(() -> busy.workReactive().block()).isInstanceOf(BulkheadFullException.class);

            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(busy.work(null)).as("served once the other instance is done").isEqualTo("done");
        }));
    }

    @Test
    void eventsAndMetersOfResilience4jTellTheFleetsFigures() {
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = holdTheOnlyPermit(first, gate);
            assertThatThrownBy(() -> second.getBean(Busy.class).work(null)).isInstanceOf(BulkheadFullException.class);

            // the second instance holds nothing, and yet has no call available: the first holds the fleet's only one
            MeterRegistry meters = second.getBean(MeterRegistry.class);
            await().untilAsserted(() -> assertThat(meters.get("resilience4j.bulkhead.available.concurrent.calls")
                    .tag("name", "busy").gauge().value()).isZero());
            assertThat(meters.get("resilience4j.bulkhead.max.allowed.concurrent.calls").tag("name", "busy").gauge()
                    .value()).isEqualTo(1);
            assertThat(((FleetBulkhead) second.getBean(BulkheadRegistry.class).bulkhead("busy")).permitsHeldHere())
                    .isZero();
            assertThat(eventTypes(second)).containsExactly(BulkheadEvent.Type.CALL_REJECTED);

            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(eventTypes(first)).containsExactly(BulkheadEvent.Type.CALL_PERMITTED,
                    BulkheadEvent.Type.CALL_FINISHED);
            SemaphoreRegistry semaphores = first.getBean(SemaphoreRegistry.class);
            await().untilAsserted(() -> assertThat(semaphores.inUse("busy").orElseThrow().state().used()).isZero());
            MeterRegistry firstMeters = first.getBean(MeterRegistry.class);
            await().untilAsserted(() -> assertThat(firstMeters.get("resilience4j.bulkhead.available.concurrent.calls")
                    .tag("name", "busy").gauge().value()).isEqualTo(1));
        }));
    }

    @Test
    void aRetryAroundTheBulkheadAcquiresAgain() {
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = holdTheOnlyPermit(first, gate);
            Future<String> retried = callers.submit(() -> second.getBean(Busy.class).retried());
            // refused at least once while the first instance holds the permit, then retried
            await().until(() -> eventTypes(second).contains(BulkheadEvent.Type.CALL_REJECTED));
            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(retried.get(60, TimeUnit.SECONDS)).isEqualTo("retried");
            assertThat(second.getBean(RetryRegistry.class).retry("patient").getMetrics()
                    .getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(1);
            assertThat(eventTypes(second)).endsWith(BulkheadEvent.Type.CALL_PERMITTED, BulkheadEvent.Type.CALL_FINISHED);
        }));
    }

    @Test
    void aCircuitBreakersFallbackRunsWhenTheBulkheadRefuses() {
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = holdTheOnlyPermit(first, gate);
            assertThat(second.getBean(Busy.class).guarded()).isEqualTo("fallback after BulkheadFullException");
            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(second.getBean(Busy.class).guarded()).isEqualTo("guarded");
        }));
    }

    private Future<String> holdTheOnlyPermit(ApplicationContext context, Gate gate) {
        Future<String> holder = callers.submit(() -> context.getBean(Busy.class).work(gate));
        gate.awaitEntered(1);
        return holder;
    }

    @SuppressWarnings("unchecked")
    private static List<BulkheadEvent.Type> eventTypes(ApplicationContext context) {
        EventConsumerRegistry<BulkheadEvent> events =
                context.getBean("bulkheadEventConsumerRegistry", EventConsumerRegistry.class);
        return events.getEventConsumer("busy").getBufferedEvents().stream().map(BulkheadEvent::getEventType).toList();
    }

    /** A service with one bulkhead of one permit, no wait. */
    static class Busy {

        @Bulkhead(name = "busy")
        public String work(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }

        @Bulkhead(name = "busy")
        public CompletableFuture<String> workAsync() {
            return CompletableFuture.completedFuture("done");
        }

        @Bulkhead(name = "busy")
        public Mono<String> workReactive() {
            return Mono.just("done");
        }

        @Retry(name = "patient")
        @Bulkhead(name = "busy")
        public String retried() {
            return "retried";
        }

        @CircuitBreaker(name = "guard", fallbackMethod = "fallback")
        @Bulkhead(name = "busy")
        public String guarded() {
            return "guarded";
        }

        String fallback(Throwable refusal) {
            return "fallback after " + refusal.getClass().getSimpleName();
        }
    }
}
