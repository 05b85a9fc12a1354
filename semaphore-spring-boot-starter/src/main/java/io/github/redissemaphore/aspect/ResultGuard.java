package io.github.redissemaphore.aspect;

/**
 * Holds a permit for as long as a method's result is in the making: until it returns for plain
 * results, until it completes for asynchronous ones.
 */
interface ResultGuard {

    /** @return whether this guard knows how to hold a permit for results of this declared type */
    boolean supports(Class<?> returnType);

    /** @return the method's result (or the fallback's), guarded */
    Object guard(SemaphoreCall call) throws Throwable;
}
