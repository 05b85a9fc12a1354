package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreException;

import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

/**
 * Plain results: waits for the permit on the caller's thread, runs the method and gives the
 * permit back when it returns or throws. Reentrant per thread and semaphore. Asynchronous types
 * are left to the other guards.
 */
final class BlockingGuard implements ResultGuard {

    /** By name: Reactive Streams may be absent. */
    private static final String PUBLISHER = "org.reactivestreams.Publisher";

    private final ThreadHolds holds = new ThreadHolds();

    /**
     * Every type but those that complete later: holding the permit only until such a result is
     * returned would not limit the work it stands for.
     */
    @Override
    public boolean supports(Class<?> returnType) {
        return !Future.class.isAssignableFrom(returnType) && !CompletionStage.class.isAssignableFrom(returnType)
                && !isPublisher(returnType);
    }

    private static boolean isPublisher(Class<?> type) {
        if (type.getName().equals(PUBLISHER)) {
            return true;
        }
        for (Class<?> supertype : type.getInterfaces()) {
            if (isPublisher(supertype)) {
                return true;
            }
        }
        return type.getSuperclass() != null && isPublisher(type.getSuperclass());
    }

    @Override
    public Object guard(SemaphoreCall call) throws Throwable {
        String name = call.semaphore().name();
        if (holds.holds(name)) {
            // nested on this thread: the outer call's permit covers it
            return call.proceed();
        }
        Optional<Permit> permit = acquire(call);
        if (permit.isEmpty()) {
            return call.rejected(call.rejection());
        }
        holds.enter(name);
        try (Permit held = permit.get()) {
            return call.proceed();
        } finally {
            holds.exit(name);
        }
    }

    private static Optional<Permit> acquire(SemaphoreCall call) {
        try {
            return call.semaphore().tryAcquire(call.permits(), call.waitTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SemaphoreException("Interrupted while waiting for a permit of semaphore '"
                    + call.semaphore().name() + "'", e);
        }
    }
}
