package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.starter.Occupancy;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.MultiEmitter;
import io.smallrye.mutiny.subscription.UniEmitter;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The other return types of Spring's {@code ReactiveAdapterRegistry} that docs/annotation.md names:
 * Mutiny {@code Uni} and {@code Multi}, and the JDK's {@code java.util.concurrent.Flow.Publisher}.
 * As for RxJava ({@link ReactiveTypesAspectTest}): each subscription takes a permit, holds it until
 * the work completes, gives it back on error and on cancel, and leaves the queue when cancelled
 * while it waits, across two instances on one Redis. The semaphores wait 5 minutes, far past the
 * tests' bounds: a queue entry gone within them was taken out by the cancellation.
 */
@RedisTest
class MutinyAndFlowPublisherAspectTest {

    private static final int CALLERS = 6;
    private static final Duration LIMIT = Duration.ofSeconds(30);

    private final Occupancy occupancy = new Occupancy();
    private final ApplicationContextRunner instance;

    MutinyAndFlowPublisherAspectTest(RedisServer server) {
        this.instance = StarterContexts.on(server)
                .withPropertyValues("distributed-semaphore.semaphores.mutiny.permits=1",
                        "distributed-semaphore.semaphores.mutiny.wait-time=5m",
                        "distributed-semaphore.semaphores.flow-publisher.permits=1",
                        "distributed-semaphore.semaphores.flow-publisher.wait-time=5m",
                        "distributed-semaphore.semaphores.mutiny-no-wait.permits=1")
                .withBean(Occupancy.class, () -> occupancy)
                .withBean(Works.class);
    }

    @Test
    void aUniNeverRunsTwiceAtOnceAcrossTwoInstances() {
        instance.run(first -> instance.run(second -> {
            List<Object> results = occupancy.callConcurrently(CALLERS,
                    i -> works(i % 2 == 0 ? first : second).uni(i).subscribeAsCompletionStage());
            assertThat(results).containsExactly(0, 1, 2, 3, 4, 5);
            assertThat(occupancy.max()).as("most subscriptions inside at once").isEqualTo(1);
            awaitNobodyIn(first, "mutiny");
        }));
    }

    @Test
    void aMultiNeverRunsTwiceAtOnceAcrossTwoInstances() {
        instance.run(first -> instance.run(second -> {
            List<Object> results = occupancy.callConcurrently(CALLERS,
                    i -> works(i % 2 == 0 ? first : second).multi(i).collect().asList().subscribeAsCompletionStage());
            assertThat(results).containsExactly(List.of(0, 0), List.of(1, -1), List.of(2, -2), List.of(3, -3),
                    List.of(4, -4), List.of(5, -5));
            assertThat(occupancy.max()).as("most subscriptions inside at once").isEqualTo(1);
            awaitNobodyIn(first, "mutiny");
        }));
    }

    @Test
    void aFlowPublisherNeverRunsTwiceAtOnceAcrossTwoInstances() {
        instance.run(first -> instance.run(second -> {
            List<Object> results = occupancy.callConcurrently(CALLERS,
                    i -> Collector.of(works(i % 2 == 0 ? first : second).publisher(i)).items);
            assertThat(results).containsExactly(List.of(0, 0), List.of(1, -1), List.of(2, -2), List.of(3, -3),
                    List.of(4, -4), List.of(5, -5));
            assertThat(occupancy.max()).as("most subscriptions inside at once").isEqualTo(1);
            awaitNobodyIn(first, "flow-publisher");
        }));
    }

    @Test
    void aUniGivesThePermitBackOnErrorAndOnCancelHoldingOrQueued() {
        instance.run(context -> {
            Works works = works(context);
            CompletableFuture<UniEmitter<? super Integer>> failing = new CompletableFuture<>();
            CompletableFuture<Integer> failed = works.heldUni(failing).subscribeAsCompletionStage();
            emitter(failing).fail(new IllegalStateException("uni boom"));
            assertThatThrownBy(() -> failed.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).hasRootCauseMessage("uni boom");
            awaitNobodyIn(context, "mutiny");

            CompletableFuture<UniEmitter<? super Integer>> holding = new CompletableFuture<>();
            Cancellable holder = works.heldUni(holding).subscribe().with(item -> { }, failure -> { });
            CompletableFuture<Void> holdingEnded = new CompletableFuture<>();
            emitter(holding).onTermination(() -> holdingEnded.complete(null));
            assertThat(state(context, "mutiny").used()).isEqualTo(1);
            // a second subscriber queues; cancelling it leaves the queue before its work starts
            CompletableFuture<UniEmitter<? super Integer>> queued = new CompletableFuture<>();
            Cancellable waiter = works.heldUni(queued).subscribe().with(item -> { }, failure -> { });
            await().atMost(LIMIT).until(() -> state(context, "mutiny").waiters().size() == 1);
            waiter.cancel();
            await().atMost(LIMIT).until(() -> state(context, "mutiny").waiters().isEmpty());
            assertThat(queued).as("the work of the cancelled waiter").isNotDone();

            holder.cancel();
            holdingEnded.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
            awaitNobodyIn(context, "mutiny");
        });
    }

    @Test
    void aMultiGivesThePermitBackOnErrorOnCancelAndWhenItsSubscriberStopsEarly() {
        instance.run(context -> {
            Works works = works(context);
            assertThatThrownBy(() -> works.failingMulti().collect().asList().await().atMost(LIMIT))
                    .isInstanceOf(IllegalStateException.class).hasMessage("multi boom");
            awaitNobodyIn(context, "mutiny");

            // select().first() cancels the rest, which never comes
            assertThat(works.endless().select().first().collect().asList().await().atMost(LIMIT))
                    .containsExactly(0);
            awaitNobodyIn(context, "mutiny");

            CompletableFuture<MultiEmitter<? super Integer>> holding = new CompletableFuture<>();
            List<Integer> received = new CopyOnWriteArrayList<>();
            Cancellable holder = works.heldMulti(holding).subscribe().with(received::add);
            MultiEmitter<? super Integer> emitter = holding.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
            emitter.emit(1);
            await().atMost(LIMIT).until(() -> received.equals(List.of(1)));
            assertThat(state(context, "mutiny").used()).isEqualTo(1);
            holder.cancel();
            await().atMost(LIMIT).until(emitter::isCancelled);
            awaitNobodyIn(context, "mutiny");
        });
    }

    @Test
    void aFlowPublisherGivesThePermitBackOnErrorAndOnCancelHoldingOrQueued() {
        instance.run(context -> {
            Works works = works(context);
            try (SubmissionPublisher<Integer> failing = new SubmissionPublisher<>()) {
                Collector<Integer> failed = Collector.of(works.heldPublisher(failing));
                await().atMost(LIMIT).until(failing::hasSubscribers);
                assertThat(state(context, "flow-publisher").used()).isEqualTo(1);
                failing.closeExceptionally(new IllegalStateException("publisher boom"));
                assertThatThrownBy(() -> failed.items.get(LIMIT.toSeconds(), TimeUnit.SECONDS))
                        .hasRootCauseMessage("publisher boom");
            }
            awaitNobodyIn(context, "flow-publisher");

            try (SubmissionPublisher<Integer> holding = new SubmissionPublisher<>();
                 SubmissionPublisher<Integer> queued = new SubmissionPublisher<>()) {
                Collector<Integer> holder = Collector.of(works.heldPublisher(holding));
                await().atMost(LIMIT).until(holding::hasSubscribers);
                // a second subscriber queues; cancelling it leaves the queue before its work starts
                Collector<Integer> waiter = Collector.of(works.heldPublisher(queued));
                await().atMost(LIMIT).until(() -> state(context, "flow-publisher").waiters().size() == 1);
                waiter.cancel();
                await().atMost(LIMIT).until(() -> state(context, "flow-publisher").waiters().isEmpty());
                assertThat(queued.hasSubscribers()).as("the work of the cancelled waiter has a subscriber").isFalse();

                holder.cancel();
                await().atMost(LIMIT).until(() -> !holding.hasSubscribers());
            }
            awaitNobodyIn(context, "flow-publisher");
        });
    }

    @Test
    void aRejectedUniFailsOrGetsItsFallback() {
        instance.run(context -> {
            Works works = works(context);
            CompletableFuture<UniEmitter<? super String>> holding = new CompletableFuture<>();
            CompletableFuture<String> held = works.noWait(holding).subscribeAsCompletionStage();
            UniEmitter<? super String> holder = emitter(holding);

            assertThatThrownBy(() -> works.noWait(new CompletableFuture<>()).await().atMost(LIMIT))
                    .isInstanceOf(SemaphoreRejectedException.class);
            assertThat(works.noWaitOrFallback(new CompletableFuture<>()).await().atMost(LIMIT))
                    .isEqualTo("fallback: mutiny-no-wait");
            holder.complete("held");
            assertThat(held.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("held");
            awaitNobodyIn(context, "mutiny-no-wait");
        });
    }

    private static Works works(ApplicationContext context) {
        return context.getBean(Works.class);
    }

    /** @return the emitter of a {@code Uni} whose work runs: its subscription holds the permit */
    private static <T> UniEmitter<? super T> emitter(CompletableFuture<UniEmitter<? super T>> work) throws Exception {
        return work.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** No permit used, no holder and no waiter left in Redis. */
    private static void awaitNobodyIn(ApplicationContext context, String semaphore) {
        await().atMost(LIMIT).untilAsserted(() -> {
            SemaphoreState state = state(context, semaphore);
            assertThat(state.used()).isZero();
            assertThat(state.holders()).isEmpty();
            assertThat(state.waiters()).isEmpty();
        });
    }

    private static SemaphoreState state(ApplicationContext context, String semaphore) {
        return context.getBean(SemaphoreRegistry.class).semaphore(semaphore).state();
    }

    /** A plain JDK subscriber, as an application without any reactive library would write one. */
    static final class Collector<T> implements Flow.Subscriber<T> {

        final CompletableFuture<List<T>> items = new CompletableFuture<>();
        private final List<T> received = new CopyOnWriteArrayList<>();
        private final CompletableFuture<Flow.Subscription> subscription = new CompletableFuture<>();

        static <T> Collector<T> of(Flow.Publisher<T> publisher) {
            Collector<T> collector = new Collector<>();
            publisher.subscribe(collector);
            return collector;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            this.subscription.complete(subscription);
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T item) {
            received.add(item);
        }

        @Override
        public void onError(Throwable error) {
            items.completeExceptionally(error);
        }

        @Override
        public void onComplete() {
            items.complete(List.copyOf(received));
        }

        void cancel() throws Exception {
            subscription.get(LIMIT.toSeconds(), TimeUnit.SECONDS).cancel();
        }
    }

    /** The guarded work, each kind on threads of its own, as an application's would be. */
    static class Works implements DisposableBean {

        private final Occupancy occupancy;
        private final ExecutorService workers = Executors.newCachedThreadPool();

        Works(Occupancy occupancy) {
            this.occupancy = occupancy;
        }

        @DistributedSemaphore("mutiny")
        public Uni<Integer> uni(int i) {
            return Uni.createFrom().item(() -> occupancy.visit(i)).runSubscriptionOn(workers);
        }

        @DistributedSemaphore("mutiny")
        public Multi<Integer> multi(int i) {
            return Multi.createFrom().items(() -> Stream.of(occupancy.visit(i), -i)).runSubscriptionOn(workers);
        }

        /** Its work runs once subscribed: then {@code work} has the emitter that ends it. */
        @DistributedSemaphore("mutiny")
        public Uni<Integer> heldUni(CompletableFuture<UniEmitter<? super Integer>> work) {
            return Uni.createFrom().<Integer>emitter(work::complete);
        }

        @DistributedSemaphore("mutiny")
        public Multi<Integer> heldMulti(CompletableFuture<MultiEmitter<? super Integer>> work) {
            return Multi.createFrom().<Integer>emitter(work::complete);
        }

        @DistributedSemaphore("mutiny")
        public Multi<Integer> failingMulti() {
            return Multi.createFrom().emitter(emitter -> {
                emitter.emit(1);
                emitter.fail(new IllegalStateException("multi boom"));
            });
        }

        @DistributedSemaphore("mutiny")
        public Multi<Integer> endless() {
            return Multi.createFrom().range(0, Integer.MAX_VALUE);
        }

        /** A cold JDK publisher: each subscriber gets its own run of the work. */
        @DistributedSemaphore("flow-publisher")
        public Flow.Publisher<Integer> publisher(int i) {
            return subscriber -> {
                SubmissionPublisher<Integer> items = new SubmissionPublisher<>(workers, Flow.defaultBufferSize());
                items.subscribe(subscriber);
                workers.execute(() -> {
                    try {
                        items.submit(occupancy.visit(i));
                        items.submit(-i);
                        items.close();
                    } catch (RuntimeException e) {
                        items.closeExceptionally(e);
                    }
                });
            };
        }

        @DistributedSemaphore("flow-publisher")
        public Flow.Publisher<Integer> heldPublisher(SubmissionPublisher<Integer> items) {
            return items;
        }

        @DistributedSemaphore("mutiny-no-wait")
        public Uni<String> noWait(CompletableFuture<UniEmitter<? super String>> work) {
            return Uni.createFrom().<String>emitter(work::complete);
        }

        @DistributedSemaphore(value = "mutiny-no-wait", fallbackMethod = "busy")
        public Uni<String> noWaitOrFallback(CompletableFuture<UniEmitter<? super String>> work) {
            return Uni.createFrom().<String>emitter(work::complete);
        }

        Uni<String> busy(CompletableFuture<UniEmitter<? super String>> work, SemaphoreRejectedException rejection) {
            return Uni.createFrom().item("fallback: " + rejection.getSemaphoreName());
        }

        @Override
        public void destroy() {
            workers.shutdownNow();
        }
    }
}
