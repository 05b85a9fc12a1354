package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * How long a call of {@link RedisConnections} may take: the registry's Redis timeout, or the
 * factory's command timeout if that is shorter (the library's connection is given it as its command
 * timeout too); and a call's reply bounded by it, failing with {@link SemaphoreUnavailableException}
 * as does any failure, a call that timed out noted as unanswered ({@link AnswerTracker}).
 */
final class TimeBound {

    private final Duration timeout;
    private final AnswerTracker answers;
    /** Why the last connect failed, while there is no connection; else null. */
    private final Supplier<@Nullable RuntimeException> connectFailure;

    /**
     * @param timeout        how long a call may take ({@link #of})
     * @param connectFailure why the last connect failed, while there is no connection; else null
     */
    TimeBound(Duration timeout, AnswerTracker answers, Supplier<@Nullable RuntimeException> connectFailure) {
        this.timeout = timeout;
        this.answers = answers;
        this.connectFailure = connectFailure;
    }

    /**
     * @param timeout the longest a call may take
     * @return {@code timeout}, or the factory's command timeout if that is shorter
     */
    static Duration of(LettuceConnectionFactory connectionFactory, Duration timeout) {
        Duration factoryTimeout = connectionFactory.getClientConfiguration().getCommandTimeout();
        return factoryTimeout.compareTo(timeout) < 0 ? factoryTimeout : timeout;
    }

    /** @return how long a call may take before it fails */
    Duration timeout() {
        return timeout;
    }

    /**
     * @return {@code reply} failing after {@code limit} ({@link #timeout()}, or longer for a call
     *         that also waits on the server) with {@link SemaphoreUnavailableException}, as does any
     *         failure; the value parsed
     */
    <R, T> CompletableFuture<T> within(SemaphoreKeys keys, CompletableFuture<R> reply, Duration limit,
                                       Function<R, T> parse) {
        return reply.orTimeout(limit.toNanos(), TimeUnit.NANOSECONDS)
                .handle((value, error) -> {
                    if (error != null) {
                        Throwable cause = CallFailures.cause(error);
                        if (cause instanceof TimeoutException) {
                            answers.unanswered();
                            cause = CallFailures.noReply(limit, connectFailure.get());
                        }
                        throw CallFailures.unavailable(keys.name(), cause);
                    }
                    if (value == null) {
                        throw new SemaphoreUnavailableException(keys.name(), Reason.UNAVAILABLE,
                                "Redis gave no reply for semaphore '" + keys.name() + "'", null);
                    }
                    return parse.apply(value);
                });
    }
}
