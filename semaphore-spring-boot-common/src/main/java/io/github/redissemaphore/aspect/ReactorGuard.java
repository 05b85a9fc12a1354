package io.github.redissemaphore.aspect;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reactor {@code Mono} and {@code Flux} results: each subscription holds a permit until it
 * completes, errs or is cancelled ({@link ReactiveHold}). Used only when Reactor is present.
 */
final class ReactorGuard implements ResultGuard {

    private final ReactiveHold hold;

    ReactorGuard(ReactiveHold hold) {
        this.hold = hold;
    }

    @Override
    public boolean supports(Method method) {
        Class<?> returnType = method.getReturnType();
        return returnType == Mono.class || returnType == Flux.class;
    }

    @Override
    public @Nullable Object guard(SemaphoreCall call) throws Throwable {
        // The method only assembles the publisher; the work happens on subscription, under the permit.
        Object publisher = call.proceed();
        if (publisher == null) {
            return null;
        }
        return hold.hold(call, (Publisher<?>) publisher, fallback -> (Publisher<?>) fallback);
    }
}
