package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreUnavailableException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Takes a permit for an asynchronous result without blocking any thread, and makes sure the
 * guarded method then runs on the application's executor: a permit that comes after a wait is
 * delivered on one of the library's own threads (the single inbox thread, or the renewal
 * scheduler), which a slow method body must never occupy. A permit granted at once needs no such
 * hop, and the method runs on the caller's thread.
 */
final class AsyncAcquisition {

    private final Executor executor;

    AsyncAcquisition(Executor executor) {
        this.executor = executor;
    }

    /**
     * @return the permit, or the reason there is none; cancelling it leaves the queue and never
     *         leaks a permit granted meanwhile
     */
    CompletableFuture<Permit> start(SemaphoreCall call) {
        CompletableFuture<Permit> acquiring;
        try {
            acquiring = call.semaphore().acquireAsync(call.permits(), call.waitTime());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (acquiring.isDone()) {
            return acquiring;
        }
        CompletableFuture<Permit> handedOver = new CompletableFuture<>();
        handedOver.whenComplete((permit, error) -> {
            if (handedOver.isCancelled()) {
                acquiring.cancel(false);
            }
        });
        acquiring.whenComplete((permit, error) -> {
            if (error != null) {
                handedOver.completeExceptionally(error);
                return;
            }
            try {
                executor.execute(() -> {
                    if (!handedOver.complete(permit)) {
                        permit.release();
                    }
                });
            } catch (RuntimeException rejected) {
                // the executor stops taking work while the application shuts down
                permit.release();
                handedOver.completeExceptionally(new SemaphoreUnavailableException(call.semaphore().name(),
                        SemaphoreUnavailableException.Reason.SHUTTING_DOWN,
                        "No thread to run the call on semaphore '" + call.semaphore().name() + "'", rejected));
            }
        });
        return handedOver;
    }
}
