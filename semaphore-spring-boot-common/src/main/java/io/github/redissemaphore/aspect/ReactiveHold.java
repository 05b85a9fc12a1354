package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.util.function.Function;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A publisher's work under a permit, with Reactor: each subscription takes a permit (without
 * blocking) before it subscribes to the work, and gives it back on complete, error or cancel;
 * cancelling while waiting leaves the queue. A rejection of the call's own acquisition goes to the
 * fallback, if there is one. Shared by every guard of a reactive result, so the rules are written
 * once.
 */
final class ReactiveHold {

    private final AsyncAcquisition acquisition;

    ReactiveHold(AsyncAcquisition acquisition) {
        this.acquisition = acquisition;
    }

    /**
     * @param work     the method's publisher; nothing happens until it is subscribed
     * @param toPublisher turns the fallback's result (of the method's declared type) into a publisher
     * @return a {@code Mono} when {@code work} is one, else a {@code Flux}
     */
    Publisher<Object> hold(SemaphoreCall call, Publisher<?> work, Function<Object, Publisher<?>> toPublisher) {
        // Cancelling the subscription while waiting cancels the future: the wait leaves the queue.
        Mono<Permit> permit = Mono.fromFuture(() -> acquisition.start(call))
                .onErrorMap(SemaphoreRejectedException.class, Rejected::new);
        if (work instanceof Mono<?> mono) {
            return Mono.usingWhen(permit, held -> mono.cast(Object.class), ReactiveHold::release,
                            (held, error) -> release(held), ReactiveHold::release)
                    .onErrorResume(Rejected.class, rejected -> Mono.from(fallback(call, rejected, toPublisher)));
        }
        // Not Flux.usingWhen(permit, ...): given a resource that comes after the subscription,
        // Reactor holds a cancel back until the work's first request returns, so a synchronous
        // source asked for everything (a range, then first()) ran on and kept the permit. Here
        // flatMapMany and a usingWhen on the permit at hand pass a cancel on at once.
        return permit.flatMapMany(permitHeld -> Flux.usingWhen(Mono.just(permitHeld),
                        held -> Flux.from(work).cast(Object.class), ReactiveHold::release,
                        (held, error) -> release(held), ReactiveHold::release))
                .onErrorResume(Rejected.class, rejected -> fallback(call, rejected, toPublisher));
    }

    /** Releasing is a blocking Redis call: keep it off event-loop threads. */
    private static Mono<Void> release(Permit permit) {
        return Mono.<Void>fromRunnable(permit::release).subscribeOn(Schedulers.boundedElastic());
    }

    private static Flux<Object> fallback(SemaphoreCall call, Rejected rejected,
                                         Function<Object, Publisher<?>> toPublisher) {
        try {
            Object fallback = call.rejected(rejected.rejection);
            return fallback != null ? Flux.from(toPublisher.apply(fallback)).cast(Object.class) : Flux.empty();
        } catch (Throwable e) {
            return Flux.error(e);
        }
    }

    /**
     * Marks a rejection of this call's own acquisition, so that the fallback never answers for a
     * rejection the method's publisher itself signals (say, of another semaphore).
     */
    private static final class Rejected extends RuntimeException {

        private static final long serialVersionUID = 1L;

        private final transient SemaphoreRejectedException rejection;

        Rejected(SemaphoreRejectedException rejection) {
            super(rejection.getMessage(), rejection, false, false);
            this.rejection = rejection;
        }
    }
}
