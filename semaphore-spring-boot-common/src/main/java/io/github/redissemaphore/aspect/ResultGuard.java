package io.github.redissemaphore.aspect;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * Holds a permit for as long as a method's result is in the making: until it returns for plain
 * results, until it completes for asynchronous ones. One implementation per kind of result; the
 * aspect asks them in turn which one {@linkplain #supports supports} a method, once per method.
 */
interface ResultGuard {

    /**
     * @return whether this guard knows how to hold a permit until the results of this method
     *         complete (its declared return type, and whether it is a Kotlin {@code suspend fun})
     */
    boolean supports(Method method);

    /** @return the method's result (or the fallback's), guarded */
    @Nullable Object guard(SemaphoreCall call) throws Throwable;
}
