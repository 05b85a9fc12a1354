package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Asynchronous results hold their permit until they complete, and give it back on error and on
 * cancellation, also when cancelled while still waiting for it.
 */
@RedisTest
class AsyncAspectTest {

    private final ApplicationContextRunner runner;

    AsyncAspectTest(RedisServer server) {
        this.runner = StarterContexts.on(server).withBean(AsyncService.class);
    }

    @Test
    void aCompletableFutureHoldsThePermitUntilItCompletes() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletableFuture<String> result = service.future(work);
            awaitUsed(context, "future", 1);
            assertThat(result).isNotDone();

            work.complete("done");
            assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            awaitUsed(context, "future", 0);
        });
    }

    @Test
    void aCompletionStageHoldsThePermitUntilItCompletesExceptionally() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletionStage<String> result = service.stage(work);
            awaitUsed(context, "stage", 1);

            work.completeExceptionally(new IllegalStateException("boom"));
            assertThatThrownBy(() -> result.toCompletableFuture().get(10, TimeUnit.SECONDS))
                    .hasRootCauseInstanceOf(IllegalStateException.class).hasRootCauseMessage("boom");
            awaitUsed(context, "stage", 0);
        });
    }

    @Test
    void cancellingTheResultCancelsTheWorkAndGivesThePermitBack() {
        runner.run(context -> {
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletableFuture<String> result = context.getBean(AsyncService.class).future(work);
            awaitUsed(context, "future", 1);

            result.cancel(true);
            assertThat(work).isCancelled();
            awaitUsed(context, "future", 0);
        });
    }

    @Test
    void aCallerThatMustWaitIsNotBlockedAndTheMethodRunsOnceThePermitComes() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            CompletableFuture<String> first = new CompletableFuture<>();
            CompletableFuture<String> firstResult = service.future(first);
            awaitUsed(context, "future", 1);

            CompletableFuture<String> second = new CompletableFuture<>();
            CompletableFuture<String> secondResult = service.future(second);
            // returned at once, queued, method not run yet
            assertThat(secondResult).isNotDone();
            await().until(() -> state(context, "future").waiters().size() == 1);
            assertThat(service.calls()).hasSize(1);

            first.complete("first");
            await().until(() -> service.calls().size() == 2);
            // not on the library's own threads (inbox, scheduler)
            assertThat(service.calls().get(1)).doesNotStartWith("semaphore-");
            awaitUsed(context, "future", 1);
            second.complete("second");
            assertThat(firstResult.get(10, TimeUnit.SECONDS)).isEqualTo("first");
            assertThat(secondResult.get(10, TimeUnit.SECONDS)).isEqualTo("second");
            awaitUsed(context, "future", 0);
        });
    }

    @Test
    void cancellingWhileWaitingLeavesTheQueueAndLeaksNoPermit() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            CompletableFuture<String> first = new CompletableFuture<>();
            service.future(first);
            CompletableFuture<String> waiting = service.future(new CompletableFuture<>());
            await().until(() -> state(context, "future").waiters().size() == 1);

            waiting.cancel(true);
            await().until(() -> state(context, "future").waiters().isEmpty());
            first.complete("first");
            awaitUsed(context, "future", 0);
            assertThat(service.calls()).as("the cancelled call never ran").hasSize(1);
        });
    }

    @Test
    void aRejectedAsynchronousCallFailsItsFutureOrGetsItsFallback() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            CompletableFuture<String> first = new CompletableFuture<>();
            service.noWait(first);
            awaitUsed(context, "no-wait", 1);

            assertThatThrownBy(() -> service.noWait(new CompletableFuture<>()).get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(SemaphoreRejectedException.class);
            assertThat(service.noWaitOrFallback(new CompletableFuture<>()).get(10, TimeUnit.SECONDS))
                    .isEqualTo("fallback: no-wait");
            first.complete("first");
            awaitUsed(context, "no-wait", 0);
        });
    }

    @Test
    void aMonoTakesThePermitOnSubscribeAndHoldsItUntilItCompletes() {
        runner.run(context -> {
            Sinks.One<String> sink = Sinks.one();
            Mono<String> mono = context.getBean(AsyncService.class).mono(sink);
            assertThat(state(context, "mono").used()).as("assembling takes nothing").isZero();

            CompletableFuture<String> result = mono.toFuture();
            awaitUsed(context, "mono", 1);
            sink.tryEmitValue("value");
            assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("value");
            awaitUsed(context, "mono", 0);
        });
    }

    @Test
    void aMonoGivesThePermitBackOnErrorAndOnCancel() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            Sinks.One<String> failing = Sinks.one();
            CompletableFuture<String> failed = service.mono(failing).toFuture();
            awaitUsed(context, "mono", 1);
            failing.tryEmitError(new IllegalStateException("boom"));
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("boom");
            awaitUsed(context, "mono", 0);

            Disposable subscription = service.mono(Sinks.one()).subscribe();
            awaitUsed(context, "mono", 1);
            subscription.dispose();
            awaitUsed(context, "mono", 0);
        });
    }

    @Test
    void aMonoCancelledWhileWaitingLeavesTheQueueAndLeaksNoPermit() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            Sinks.One<String> first = Sinks.one();
            CompletableFuture<String> holder = service.mono(first).toFuture();
            awaitUsed(context, "mono", 1);
            Disposable waiter = service.mono(Sinks.one()).subscribe();
            await().until(() -> state(context, "mono").waiters().size() == 1);

            waiter.dispose();
            await().until(() -> state(context, "mono").waiters().isEmpty());
            first.tryEmitValue("first");
            assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("first");
            awaitUsed(context, "mono", 0);
        });
    }

    @Test
    void aRejectedMonoGetsItsFallback() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            Sinks.One<String> first = Sinks.one();
            CompletableFuture<String> holder = service.monoNoWait(first).toFuture();
            awaitUsed(context, "mono-no-wait", 1);

            assertThat(service.monoNoWait(Sinks.one()).toFuture().get(10, TimeUnit.SECONDS))
                    .isEqualTo("fallback: mono-no-wait");
            first.tryEmitValue("first");
            assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("first");
            awaitUsed(context, "mono-no-wait", 0);
        });
    }

    @Test
    void aFluxHoldsThePermitUntilItCompletesOrIsCancelled() {
        runner.run(context -> {
            AsyncService service = context.getBean(AsyncService.class);
            Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer();
            CompletableFuture<List<Integer>> all = service.flux(sink).collectList().toFuture();
            awaitUsed(context, "flux", 1);
            sink.tryEmitNext(1);
            sink.tryEmitNext(2);
            assertThat(state(context, "flux").used()).isEqualTo(1);
            sink.tryEmitComplete();
            assertThat(all.get(10, TimeUnit.SECONDS)).containsExactly(1, 2);
            awaitUsed(context, "flux", 0);

            Disposable cancelled = service.flux(Sinks.many().unicast().onBackpressureBuffer()).subscribe();
            awaitUsed(context, "flux", 1);
            cancelled.dispose();
            awaitUsed(context, "flux", 0);
        });
    }

    private static void awaitUsed(ApplicationContext context, String semaphore, int used) {
        await().untilAsserted(() -> assertThat(state(context, semaphore).used()).isEqualTo(used));
    }

    private static SemaphoreState state(ApplicationContext context, String semaphore) {
        return context.getBean(SemaphoreRegistry.class).semaphore(semaphore).state();
    }

    static class AsyncService {

        private final List<String> calls = new CopyOnWriteArrayList<>();

        /** @return the thread each call of {@link #future} ran on (a method: this bean is a proxy) */
        public List<String> calls() {
            return calls;
        }

        @DistributedSemaphore(value = "future", waitTime = "20s")
        public CompletableFuture<String> future(CompletableFuture<String> work) {
            calls.add(Thread.currentThread().getName());
            return work;
        }

        @DistributedSemaphore("stage")
        public CompletionStage<String> stage(CompletableFuture<String> work) {
            return work;
        }

        @DistributedSemaphore("no-wait")
        public CompletableFuture<String> noWait(CompletableFuture<String> work) {
            return work;
        }

        @DistributedSemaphore(value = "no-wait", fallbackMethod = "busy")
        public CompletableFuture<String> noWaitOrFallback(CompletableFuture<String> work) {
            return work;
        }

        CompletableFuture<String> busy(CompletableFuture<String> work, SemaphoreRejectedException rejection) {
            return CompletableFuture.completedFuture("fallback: " + rejection.getSemaphoreName());
        }

        @DistributedSemaphore(value = "mono", waitTime = "20s")
        public Mono<String> mono(Sinks.One<String> sink) {
            return sink.asMono();
        }

        @DistributedSemaphore(value = "mono-no-wait", fallbackMethod = "monoBusy")
        public Mono<String> monoNoWait(Sinks.One<String> sink) {
            return sink.asMono();
        }

        Mono<String> monoBusy(Sinks.One<String> sink, SemaphoreRejectedException rejection) {
            return Mono.just("fallback: " + rejection.getSemaphoreName());
        }

        @DistributedSemaphore("flux")
        public Flux<Integer> flux(Sinks.Many<Integer> sink) {
            return sink.asFlux();
        }
    }
}
