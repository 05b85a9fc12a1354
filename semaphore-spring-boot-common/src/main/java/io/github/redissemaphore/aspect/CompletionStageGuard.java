package io.github.redissemaphore.aspect;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

/**
 * {@code CompletionStage} and {@code CompletableFuture} results: the permit is taken without
 * blocking the caller, the method runs once it is held, and the permit goes back when the
 * method's stage completes. The caller gets a {@code CompletableFuture} at once; cancelling it
 * while waiting leaves the queue, cancelling it later cancels the method's future (when it is
 * one), and the permit goes back when that completes.
 */
final class CompletionStageGuard implements ResultGuard {

    private final AsyncAcquisition acquisition;

    CompletionStageGuard(AsyncAcquisition acquisition) {
        this.acquisition = acquisition;
    }

    @Override
    public boolean supports(Method method) {
        Class<?> returnType = method.getReturnType();
        // only types a CompletableFuture can stand in for
        return CompletionStage.class.isAssignableFrom(returnType)
                && returnType.isAssignableFrom(CompletableFuture.class);
    }

    @Override
    public Object guard(SemaphoreCall call) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Permit> acquiring = acquisition.start(call);
        result.whenComplete((value, error) -> {
            if (result.isCancelled()) {
                acquiring.cancel(false);
            }
        });
        acquiring.whenComplete((permit, error) -> {
            if (error == null) {
                run(call, permit, result);
            } else if (error instanceof SemaphoreRejectedException rejection) {
                fallBack(call, rejection, result);
            } else {
                result.completeExceptionally(error);
            }
        });
        return result;
    }

    private static void run(SemaphoreCall call, Permit permit, CompletableFuture<Object> result) {
        if (result.isDone()) {
            // cancelled while the permit was on its way
            permit.release();
            return;
        }
        CompletionStage<?> stage;
        try {
            stage = (CompletionStage<?>) call.proceed();
        } catch (Throwable e) {
            permit.release();
            result.completeExceptionally(e);
            return;
        }
        if (stage == null) {
            permit.release();
            result.complete(null);
            return;
        }
        result.whenComplete((value, error) -> {
            if (result.isCancelled() && stage instanceof Future<?> future) {
                future.cancel(true);
            }
        });
        stage.whenComplete((value, error) -> {
            permit.release();
            relay(value, error, result);
        });
    }

    private static void fallBack(SemaphoreCall call, SemaphoreRejectedException rejection,
                                 CompletableFuture<Object> result) {
        try {
            CompletionStage<?> stage = (CompletionStage<?>) call.rejected(rejection);
            if (stage == null) {
                result.complete(null);
            } else {
                stage.whenComplete((value, error) -> relay(value, error, result));
            }
        } catch (Throwable e) {
            result.completeExceptionally(e);
        }
    }

    private static void relay(Object value, Throwable error, CompletableFuture<Object> result) {
        if (error != null) {
            result.completeExceptionally(error);
        } else {
            result.complete(value);
        }
    }
}
