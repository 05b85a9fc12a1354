package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.lang.reflect.Method;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * One call of a guarded method: the semaphore it needs, how much of it and for how long to wait,
 * and how to go on (the method) or give up (the fallback, else the rejection).
 *
 * @param method the guarded method as declared on the target class
 */
record SemaphoreCall(RedisSemaphore semaphore, int permits, Duration waitTime, Method method, Invocation invocation,
                     @Nullable FallbackMethod fallback, Object target, Object[] args) {

    /** Runs the guarded method. */
    Object proceed() throws Throwable {
        return invocation.proceed();
    }

    /**
     * No permit came (the semaphore's own rejection): the fallback's result, if there is a fallback.
     *
     * @throws SemaphoreRejectedException when there is none
     */
    @Nullable Object rejected(SemaphoreRejectedException rejection) throws Throwable {
        if (fallback == null) {
            throw rejection;
        }
        return fallback.invoke(target, args, rejection);
    }
}
