package io.github.redissemaphore.concurrencylimit;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.lang.reflect.Method;
import java.util.Optional;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.resilience.InvocationRejectedException;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.util.ClassUtils;

/**
 * Guards a {@code @ConcurrencyLimit} call with a permit of its distributed semaphore, held while the
 * method runs (as Spring's throttle is). REJECT: no permit free across the fleet, Spring's own
 * {@link InvocationRejectedException} ({@link FleetLimitRejectedException}) at once. BLOCK: the call waits in arrival order across the
 * fleet, up to the wait of {@link LimitedMethods}, then the same exception. An interrupted wait is
 * refused too, with the thread's interrupt flag kept.
 */
final class FleetConcurrencyLimitInterceptor implements MethodInterceptor {

    private final LimitedMethods methods;
    private final Supplier<SemaphoreRegistry> registry;

    FleetConcurrencyLimitInterceptor(LimitedMethods methods, Supplier<SemaphoreRegistry> registry) {
        this.methods = methods;
        this.registry = registry;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        @Nullable Object target = invocation.getThis();
        Class<?> userClass = ClassUtils.getUserClass(target != null ? target.getClass()
                : invocation.getMethod().getDeclaringClass());
        Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), userClass);
        Optional<LimitedMethod> limited = methods.of(userClass, method);
        if (limited.isEmpty()) {
            return invocation.proceed();
        }
        Permit permit = acquire(limited.get(), target != null ? target : userClass);
        try {
            return invocation.proceed();
        } finally {
            permit.release();
        }
    }

    private Permit acquire(LimitedMethod limited, Object target) {
        Optional<Permit> permit;
        try {
            permit = limited.semaphore(registry).tryAcquire(1, limited.maxWait());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FleetLimitRejectedException("Interrupted while waiting for a permit of the fleet-wide limit "
                    + limited.permits() + " of " + limited.semaphoreName(), target, limited.semaphoreName());
        }
        return permit.orElseThrow(() -> new FleetLimitRejectedException(
                limited.policy() == ConcurrencyLimit.ThrottlePolicy.REJECT
                        ? "Concurrency limit reached: " + limited.permits() + " - not allowed to enter "
                                + limited.semaphoreName() + " (fleet-wide)"
                        : "Concurrency limit reached: " + limited.permits() + " - no permit within " + limited.maxWait()
                                + " for " + limited.semaphoreName() + " (fleet-wide)",
                target, limited.semaphoreName()));
    }
}
