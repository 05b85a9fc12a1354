package io.github.redissemaphore.aspect;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.KotlinDetector;

/**
 * Kotlin {@code suspend} functions. Spring AOP calls one through a publisher (a {@code Mono}, a
 * {@code Flux} for a {@code Flow} result) that the proxy awaits in the caller's coroutine only
 * after the advice has returned, while the declared return type is {@code Object}: the permit
 * must be held by that publisher ({@link ReactiveHold}), from the moment the coroutine awaits it
 * until it completes, throws or is cancelled. Used only when kotlinx-coroutines-reactor is present,
 * the condition under which Spring AOP makes the publisher.
 */
final class SuspendingFunctionGuard implements ResultGuard {

    private final ReactiveHold hold;

    SuspendingFunctionGuard(ReactiveHold hold) {
        this.hold = hold;
    }

    @Override
    public boolean supports(Method method) {
        return KotlinDetector.isSuspendingFunction(method);
    }

    @Override
    public @Nullable Object guard(SemaphoreCall call) throws Throwable {
        Object result = call.proceed();
        if (!(result instanceof Publisher<?> publisher)) {
            throw new IllegalStateException("Spring AOP called suspend function "
                    + SemaphoreOperations.describe(call.method()) + " without a publisher (got "
                    + (result == null ? "null" : result.getClass().getName()) + "): no permit can be held for it");
        }
        // the fallback is a suspend function too, called through a publisher the same way
        return hold.hold(call, publisher, fallback -> (Publisher<?>) fallback);
    }
}
