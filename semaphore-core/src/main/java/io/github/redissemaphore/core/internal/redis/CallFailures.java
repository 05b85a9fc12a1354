package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.lettuce.core.RedisCommandTimeoutException;

import java.time.Duration;
import java.util.concurrent.CompletionException;

import org.jspecify.annotations.Nullable;

/**
 * The words of a call that failed for want of Redis: {@link SemaphoreUnavailableException}
 * saying what went wrong (no reply in time, no connection and why, the registry closed). What a
 * server refused is worded by {@link RefusedCalls}.
 */
final class CallFailures {

    private CallFailures() {
    }

    /** @return {@code error} if it is the library's own, else a {@link SemaphoreUnavailableException} with it as cause */
    static SemaphoreException unavailable(String name, Throwable error) {
        if (error instanceof SemaphoreException e) {
            return e;
        }
        return new SemaphoreUnavailableException(name, Reason.of(error),
                "Redis unavailable for semaphore '" + name + "': " + error.getMessage(), error);
    }

    /** @return what a {@link CompletionException} wraps, else {@code error} */
    static Throwable cause(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** @return the failure of a call made on, or waiting in, a registry that closed */
    static SemaphoreUnavailableException closed() {
        return new SemaphoreUnavailableException(null, Reason.SHUTTING_DOWN, "The semaphore registry is closed", null);
    }

    /**
     * Why a call got no reply in time: no connection could be made (and why, the connect failure
     * kept as the cause so its own cause, such as {@code WRONGPASS} or a TLS error, is in the
     * trace), or Redis did not answer.
     *
     * @param connectFailure why the last connect failed, when there is no connection; else null
     */
    static RedisCommandTimeoutException noReply(Duration limit, @Nullable RuntimeException connectFailure) {
        if (connectFailure != null) {
            RedisCommandTimeoutException timeout = new RedisCommandTimeoutException(
                    "no connection to Redis within " + limit.toMillis() + " ms (" + describe(connectFailure)
                            + RefusedCalls.whileConnecting(connectFailure) + ")");
            timeout.initCause(connectFailure);
            return timeout;
        }
        return new RedisCommandTimeoutException("no reply within " + limit.toMillis() + " ms");
    }

    /**
     * @return a connect failure's message, and its root cause's when that says more (the server's
     *         reply, a TLS error)
     */
    private static String describe(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = String.valueOf(failure.getMessage());
        return root == failure || root.getMessage() == null || message.contains(root.getMessage())
                ? message : message + ": " + root.getMessage();
    }
}
