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
import java.util.concurrent.TimeUnit;

import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Maybe;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.schedulers.Schedulers;
import io.reactivex.rxjava3.subjects.CompletableSubject;
import io.reactivex.rxjava3.subjects.MaybeSubject;
import io.reactivex.rxjava3.subjects.PublishSubject;
import io.reactivex.rxjava3.subjects.SingleSubject;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Return types the aspect holds through Spring's {@code ReactiveAdapterRegistry}, here RxJava 3:
 * each subscription takes a permit, holds it until the work completes and gives it back on error
 * and on dispose, across two instances on one Redis; a rejection fails the result or gets the
 * fallback, as for {@code Mono}.
 */
@RedisTest
class ReactiveTypesAspectTest {

    private static final int CALLERS = 6;
    private static final Duration LIMIT = Duration.ofSeconds(30);

    private final Occupancy occupancy = new Occupancy();
    private final ApplicationContextRunner instance;

    ReactiveTypesAspectTest(RedisServer server) {
        this.instance = StarterContexts.on(server)
                .withPropertyValues("distributed-semaphore.semaphores.rx.permits=1",
                        "distributed-semaphore.semaphores.rx.wait-time=30s",
                        "distributed-semaphore.semaphores.rx-no-wait.permits=1")
                .withBean(Occupancy.class, () -> occupancy)
                .withBean(RxService.class);
    }

    @Test
    void aSingleNeverRunsTwiceAtOnceAcrossTwoInstances() {
        instance.run(first -> instance.run(second -> {
            List<Object> results = callConcurrently(first, second, (service, i) -> service.single(i).toCompletionStage()
                    .toCompletableFuture());
            assertThat(results).containsExactly(0, 1, 2, 3, 4, 5);
            assertThat(occupancy.max()).as("most subscriptions inside at once").isEqualTo(1);
            awaitUsed(first, "rx", 0);
        }));
    }

    @Test
    void aFlowableNeverRunsTwiceAtOnceAcrossTwoInstances() {
        instance.run(first -> instance.run(second -> {
            List<Object> results = callConcurrently(first, second, (service, i) -> service.flowable(i).toList()
                    .toCompletionStage().toCompletableFuture());
            assertThat(results).containsExactly(List.of(0, 0), List.of(1, -1), List.of(2, -2), List.of(3, -3),
                    List.of(4, -4), List.of(5, -5));
            assertThat(occupancy.max()).as("most subscriptions inside at once").isEqualTo(1);
            awaitUsed(first, "rx", 0);
        }));
    }

    @Test
    void aSingleGivesThePermitBackOnErrorAndOnDispose() {
        instance.run(context -> {
            RxService service = context.getBean(RxService.class);
            SingleSubject<Integer> failing = SingleSubject.create();
            CompletableFuture<Integer> failed = service.held(failing).toCompletionStage().toCompletableFuture();
            awaitUsed(context, "rx", 1);
            failing.onError(new IllegalStateException("boom"));
            assertThatThrownBy(() -> failed.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).hasRootCauseMessage("boom");
            awaitUsed(context, "rx", 0);

            Disposable disposed = service.held(SingleSubject.create()).subscribe();
            awaitUsed(context, "rx", 1);
            // a second subscriber queues; disposing it leaves the queue
            Disposable waiting = service.held(SingleSubject.create()).subscribe();
            await().atMost(LIMIT).until(() -> state(context, "rx").waiters().size() == 1);
            waiting.dispose();
            await().atMost(LIMIT).until(() -> state(context, "rx").waiters().isEmpty());
            disposed.dispose();
            awaitUsed(context, "rx", 0);
        });
    }

    @Test
    void aFlowableGivesThePermitBackOnErrorAndWhenCancelledEarly() {
        instance.run(context -> {
            RxService service = context.getBean(RxService.class);
            assertThatThrownBy(() -> service.failingFlowable().blockingSubscribe())
                    .hasMessage("flowable boom");
            awaitUsed(context, "rx", 0);

            // take(1) cancels the rest, which never comes
            assertThat(service.endless().take(1).blockingSingle()).isZero();
            awaitUsed(context, "rx", 0);
        });
    }

    @Test
    void maybeCompletableAndObservableHoldThePermitUntilTheyComplete() {
        instance.run(context -> {
            RxService service = context.getBean(RxService.class);
            MaybeSubject<String> maybe = MaybeSubject.create();
            CompletableFuture<String> maybeResult = service.maybe(maybe).toCompletionStage("empty")
                    .toCompletableFuture();
            awaitUsed(context, "rx", 1);
            maybe.onComplete();
            assertThat(maybeResult.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("empty");
            awaitUsed(context, "rx", 0);

            CompletableSubject completable = CompletableSubject.create();
            CompletableFuture<Object> completableResult = service.completable(completable)
                    .toCompletionStage(null).toCompletableFuture();
            awaitUsed(context, "rx", 1);
            completable.onComplete();
            completableResult.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
            awaitUsed(context, "rx", 0);

            PublishSubject<Integer> subject = PublishSubject.create();
            CompletableFuture<List<Integer>> observed = service.observable(subject).toList().toCompletionStage()
                    .toCompletableFuture();
            awaitUsed(context, "rx", 1);
            // the subject has its subscriber once the permit is held
            await().atMost(LIMIT).until(subject::hasObservers);
            subject.onNext(1);
            subject.onComplete();
            assertThat(observed.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).containsExactly(1);
            awaitUsed(context, "rx", 0);
        });
    }

    @Test
    void aRejectedSingleFailsOrGetsItsFallback() {
        instance.run(context -> {
            RxService service = context.getBean(RxService.class);
            SingleSubject<String> holder = SingleSubject.create();
            CompletableFuture<String> held = service.noWait(holder).toCompletionStage().toCompletableFuture();
            awaitUsed(context, "rx-no-wait", 1);

            assertThatThrownBy(() -> service.noWait(SingleSubject.create()).blockingGet())
                    .isInstanceOf(SemaphoreRejectedException.class);
            assertThat(service.noWaitOrFallback(SingleSubject.create()).blockingGet())
                    .isEqualTo("fallback: rx-no-wait");
            holder.onSuccess("held");
            assertThat(held.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("held");
            awaitUsed(context, "rx-no-wait", 0);
        });
    }

    private List<Object> callConcurrently(ApplicationContext first, ApplicationContext second,
                                          ServiceCall call) throws Exception {
        return occupancy.callConcurrently(CALLERS,
                i -> call.apply((i % 2 == 0 ? first : second).getBean(RxService.class), i));
    }

    private static void awaitUsed(ApplicationContext context, String semaphore, int used) {
        await().atMost(LIMIT).untilAsserted(() -> assertThat(state(context, semaphore).used()).isEqualTo(used));
    }

    private static SemaphoreState state(ApplicationContext context, String semaphore) {
        return context.getBean(SemaphoreRegistry.class).semaphore(semaphore).state();
    }

    @FunctionalInterface
    interface ServiceCall {
        CompletableFuture<?> apply(RxService service, int i);
    }

    static class RxService {

        private final Occupancy occupancy;

        RxService(Occupancy occupancy) {
            this.occupancy = occupancy;
        }

        @DistributedSemaphore("rx")
        public Single<Integer> single(int i) {
            return Single.fromCallable(() -> occupancy.visit(i)).subscribeOn(Schedulers.io());
        }

        @DistributedSemaphore("rx")
        public Flowable<Integer> flowable(int i) {
            return Flowable.fromCallable(() -> occupancy.visit(i)).concatWith(Flowable.just(-i))
                    .subscribeOn(Schedulers.io());
        }

        @DistributedSemaphore("rx")
        public Single<Integer> held(SingleSubject<Integer> subject) {
            return subject;
        }

        @DistributedSemaphore("rx")
        public Flowable<Integer> failingFlowable() {
            return Flowable.just(1).concatWith(Flowable.error(new IllegalStateException("flowable boom")));
        }

        @DistributedSemaphore("rx")
        public Flowable<Integer> endless() {
            return Flowable.range(0, Integer.MAX_VALUE);
        }

        @DistributedSemaphore("rx")
        public Maybe<String> maybe(MaybeSubject<String> subject) {
            return subject;
        }

        @DistributedSemaphore("rx")
        public Completable completable(CompletableSubject subject) {
            return subject;
        }

        @DistributedSemaphore("rx")
        public Observable<Integer> observable(PublishSubject<Integer> subject) {
            return subject;
        }

        @DistributedSemaphore("rx-no-wait")
        public Single<String> noWait(SingleSubject<String> subject) {
            return subject;
        }

        @DistributedSemaphore(value = "rx-no-wait", fallbackMethod = "busy")
        public Single<String> noWaitOrFallback(SingleSubject<String> subject) {
            return subject;
        }

        Single<String> busy(SingleSubject<String> subject, SemaphoreRejectedException rejection) {
            return Single.just("fallback: " + rejection.getSemaphoreName());
        }

    }
}
