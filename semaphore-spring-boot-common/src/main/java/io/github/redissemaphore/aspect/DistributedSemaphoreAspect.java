package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.lang.reflect.Method;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.core.Ordered;
import org.springframework.core.env.PropertyResolver;
import org.springframework.util.function.SingletonSupplier;

/**
 * Runs methods annotated with {@link DistributedSemaphore} (or public methods of an annotated
 * class; an annotation on the method wins) under a permit of the semaphore it names: the permit
 * is taken before the method and given back after it, also when it throws. For
 * {@code CompletionStage}/{@code CompletableFuture} results the permit is taken without blocking
 * and held until the stage completes; for Reactor {@code Mono}/{@code Flux} results, Kotlin
 * {@code suspend} functions and {@code Flow}, and every type Spring's {@code ReactiveAdapterRegistry}
 * adapts, such as RxJava's (when Reactor is on the class path), each subscription takes one and
 * holds it until complete, error or cancel. A result that completes later but that no guard can
 * hold for is refused on the first call, never run unguarded.
 * A blocking call nested in another on the same thread and semaphore takes no second permit.
 *
 * <p>Its {@linkplain #getOrder() order} decides what it wraps: by default it runs around
 * {@code @Transactional}, so no connection or transaction is held while waiting for a permit and
 * the transaction has committed before the permit goes back.
 *
 * <p>Spring asks for the order while it sorts the advice of the first bean it proxies, long before
 * the application runs: so creating the aspect must not create anything else. Give it its
 * registry as a {@link Supplier} (the auto-configuration does): the registry, and the
 * configuration it is built from, then come into existence in their own turn, and a wrong
 * property is reported as such instead of as a failure to sort advice.
 */
@Aspect
public class DistributedSemaphoreAspect implements Ordered {

    private final Supplier<SemaphoreRegistry> registry;
    private final SemaphoreOperations operations;
    private final int order;

    /**
     * @param registry      the semaphores
     * @param placeholders  resolves {@code ${...}} in semaphore names, usually the Environment
     * @param asyncExecutor runs asynchronous methods whose permit came after a wait, so they never
     *                      run on the library's own threads
     * @param order         the advice order, see {@link #getOrder()}
     */
    public DistributedSemaphoreAspect(SemaphoreRegistry registry, PropertyResolver placeholders,
                                      Executor asyncExecutor, int order) {
        this(() -> registry, placeholders, asyncExecutor, order);
    }

    /**
     * @param registry      gives the semaphores, asked once, on the first guarded call
     * @param placeholders  resolves {@code ${...}} in semaphore names, usually the Environment
     * @param asyncExecutor runs asynchronous methods whose permit came after a wait, so they never
     *                      run on the library's own threads
     * @param order         the advice order, see {@link #getOrder()}
     */
    public DistributedSemaphoreAspect(Supplier<SemaphoreRegistry> registry, PropertyResolver placeholders,
                                      Executor asyncExecutor, int order) {
        this.registry = SingletonSupplier.of(registry);
        this.order = order;
        this.operations = new SemaphoreOperations(this.registry, placeholders,
                ResultGuards.available(new AsyncAcquisition(asyncExecutor)));
    }

    /** Guards one call. */
    @Around("@annotation(io.github.redissemaphore.annotation.DistributedSemaphore)"
            + " || (execution(public * *(..)) && @within(io.github.redissemaphore.annotation.DistributedSemaphore))")
    public @Nullable Object guard(ProceedingJoinPoint joinPoint) throws Throwable {
        Object target = joinPoint.getTarget();
        Method method = ((MethodSignature) joinPoint.getSignature()).getMethod();
        SemaphoreOperation operation = operations.find(method, AopProxyUtils.ultimateTargetClass(target));
        if (operation == null) {
            return joinPoint.proceed();
        }
        return operation.invoke(registry.get(), target, joinPoint.getArgs(), joinPoint::proceed);
    }

    /**
     * The order of this advice among the other advice of a bean (lower runs further outside). Set
     * with {@code distributed-semaphore.aspect-order}; Spring Boot's default is
     * {@code Ordered.LOWEST_PRECEDENCE - 1}, just outside {@code @Transactional} and
     * {@code @Cacheable}.
     */
    @Override
    public int getOrder() {
        return order;
    }
}
