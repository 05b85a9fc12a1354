package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRejectedException;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Reactor {@code Mono} and {@code Flux} results: each subscription takes a permit (without
 * blocking) before it subscribes to the method's publisher, and gives it back on complete, error
 * or cancel. The only class of the aspect that touches Reactor, so the aspect works without it.
 */
final class ReactorGuard implements ResultGuard {

    private final AsyncAcquisition acquisition;

    ReactorGuard(AsyncAcquisition acquisition) {
        this.acquisition = acquisition;
    }

    @Override
    public boolean supports(Class<?> returnType) {
        return returnType == Mono.class || returnType == Flux.class;
    }

    @Override
    public Object guard(SemaphoreCall call) throws Throwable {
        // The method only assembles the publisher; the work happens on subscription, under the permit.
        Object publisher = call.proceed();
        if (publisher == null) {
            return null;
        }
        // Cancelling the subscription while waiting cancels the future: the wait leaves the queue.
        Mono<Permit> permit = Mono.fromFuture(() -> acquisition.start(call))
                .onErrorMap(SemaphoreRejectedException.class, Rejected::new);
        if (publisher instanceof Mono<?> mono) {
            return Mono.usingWhen(permit, held -> mono.cast(Object.class), ReactorGuard::release,
                            (held, error) -> release(held), ReactorGuard::release)
                    .onErrorResume(Rejected.class, rejected -> Mono.from(fallback(call, rejected)));
        }
        return Flux.usingWhen(permit, held -> ((Flux<?>) publisher).cast(Object.class), ReactorGuard::release,
                        (held, error) -> release(held), ReactorGuard::release)
                .onErrorResume(Rejected.class, rejected -> fallback(call, rejected));
    }

    /** Releasing is a blocking Redis call: keep it off event-loop threads. */
    private static Mono<Void> release(Permit permit) {
        return Mono.<Void>fromRunnable(permit::release).subscribeOn(Schedulers.boundedElastic());
    }

    private static Flux<Object> fallback(SemaphoreCall call, Rejected rejected) {
        try {
            Publisher<?> fallback = (Publisher<?>) call.rejected(rejected.rejection);
            return fallback != null ? Flux.from(fallback).cast(Object.class) : Flux.empty();
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
