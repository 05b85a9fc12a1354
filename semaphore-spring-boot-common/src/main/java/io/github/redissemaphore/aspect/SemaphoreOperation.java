package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;

/**
 * What {@code @DistributedSemaphore} asks of one method, resolved once: the semaphore (held, for
 * a name without a key; else its base name and the parsed key expression), permits and wait, the
 * fallback, and the guard that suits the method's return type.
 */
final class SemaphoreOperation {

    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final Method method;
    private final String name;
    private final @Nullable Expression key;
    /** The semaphore of a name without a key, from the registry once; null for a keyed one. */
    private final @Nullable RedisSemaphore semaphore;
    private final int permits;
    private final Duration waitTime;
    private final @Nullable FallbackMethod fallback;
    private final ResultGuard guard;

    /**
     * @param semaphore the semaphore when {@code key} is null, else null: a keyed one is asked of
     *                  the registry on each call, by {@code name} and the key's value
     */
    SemaphoreOperation(Method method, String name, @Nullable Expression key, @Nullable RedisSemaphore semaphore,
                       int permits, Duration waitTime, @Nullable FallbackMethod fallback, ResultGuard guard) {
        this.method = method;
        this.name = name;
        this.key = key;
        this.semaphore = semaphore;
        this.permits = permits;
        this.waitTime = waitTime;
        this.fallback = fallback;
        this.guard = guard;
    }

    /** Runs one call of the method under this operation's semaphore. */
    @Nullable Object invoke(SemaphoreRegistry registry, Object target, Object[] args, Invocation invocation)
            throws Throwable {
        return guard.guard(new SemaphoreCall(semaphore(registry, args), permits, waitTime, method, invocation, fallback,
                target, args));
    }

    /**
     * @return the semaphore held, or the keyed semaphore {@code value:key} with the key
     *         evaluated over the arguments: the registry then knows {@code value} as its base name
     */
    private RedisSemaphore semaphore(SemaphoreRegistry registry, Object[] args) {
        if (key == null) {
            return Objects.requireNonNull(semaphore, "semaphore");
        }
        Object value = key.getValue(new MethodBasedEvaluationContext(null, method, args, PARAMETER_NAMES));
        if (value == null) {
            throw new IllegalArgumentException("key '" + key.getExpressionString() + "' of @DistributedSemaphore on "
                    + SemaphoreOperations.describe(method) + " evaluated to null");
        }
        return registry.semaphore(name, value.toString());
    }
}
