package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.lang.reflect.Method;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapterRegistry;

/**
 * Plain results: waits for the permit on the caller's thread, runs the method and gives the
 * permit back when it returns or throws. Reentrant per thread and semaphore. Asynchronous types
 * are left to the other guards, and refused when none of them is there for one.
 */
final class BlockingGuard implements ResultGuard {

    /** By name: Reactive Streams and Kotlin may be absent, and then the registry knows nothing. */
    private static final Set<String> COMPLETE_LATER = Set.of("org.reactivestreams.Publisher",
            "kotlinx.coroutines.flow.Flow", "kotlinx.coroutines.Deferred");

    private final ThreadHolds holds = new ThreadHolds();

    /**
     * Every method but those whose result completes later: holding the permit only until such a
     * result is returned would not limit the work it stands for.
     */
    @Override
    public boolean supports(Method method) {
        Class<?> type = method.getReturnType();
        return !KotlinDetector.isSuspendingFunction(method) && !Future.class.isAssignableFrom(type)
                && !CompletionStage.class.isAssignableFrom(type) && !Flow.Publisher.class.isAssignableFrom(type)
                && !completesLater(type) && ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) == null;
    }

    private static boolean completesLater(Class<?> type) {
        if (COMPLETE_LATER.contains(type.getName())) {
            return true;
        }
        for (Class<?> supertype : type.getInterfaces()) {
            if (completesLater(supertype)) {
                return true;
            }
        }
        return type.getSuperclass() != null && completesLater(type.getSuperclass());
    }

    @Override
    public @Nullable Object guard(SemaphoreCall call) throws Throwable {
        String name = call.semaphore().name();
        if (holds.holds(name)) {
            // nested on this thread: the outer call's permit covers it
            return call.proceed();
        }
        Permit permit;
        try {
            permit = acquire(call);
        } catch (SemaphoreRejectedException rejection) {
            // the core's own rejection, passed on as it is
            return call.rejected(rejection);
        }
        holds.enter(name);
        try (Permit held = permit) {
            return call.proceed();
        } finally {
            holds.exit(name);
        }
    }

    private static Permit acquire(SemaphoreCall call) {
        try {
            return call.semaphore().acquire(call.permits(), call.waitTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SemaphoreException("Interrupted while waiting for a permit of semaphore '"
                    + call.semaphore().name() + "'", e);
        }
    }
}
