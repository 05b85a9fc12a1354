package io.github.redissemaphore.aspect;

/** The guarded method call itself, e.g. {@code ProceedingJoinPoint::proceed}. */
@FunctionalInterface
interface Invocation {

    Object proceed() throws Throwable;
}
