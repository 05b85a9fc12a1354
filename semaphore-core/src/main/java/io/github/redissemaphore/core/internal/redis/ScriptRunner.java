package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs script calls: each is exactly one Redis call (EVALSHA; EVAL once more when the server's
 * script cache does not have the script, as after a restart, a failover or {@code SCRIPT FLUSH}),
 * fails after the factory's command timeout counted from the moment it was asked for (getting a
 * connection is part of the call), and surfaces any Redis failure as
 * {@link SemaphoreUnavailableException}. {@link #send} returns at once (background clean-ups,
 * renewals and deadlines never hold a thread while Redis is slow or down); {@link #call} waits for
 * the reply on the caller's thread.
 */
public final class ScriptRunner {

    private final RedisConnections connections;

    public ScriptRunner(RedisConnections connections) {
        this.connections = connections;
    }

    /** @return how long a call may take before it fails: the connection factory's command timeout */
    public Duration timeout() {
        return connections.timeout();
    }

    /** Sends {@code call} on the semaphore's keys, without waiting for the reply. */
    public <T> CompletableFuture<T> send(SemaphoreKeys keys, ScriptCall<T> call) {
        CompletableFuture<List<Object>> reply = new CompletableFuture<>();
        byte[][] args = encode(call.args());
        connections.send(reply, redis -> eval(redis, call, keys.bytes(), args));
        return within(keys, reply, timeout(), value -> call.parse(new Reply(value)));
    }

    /** Sends {@code call} and waits for its reply, at most the command timeout. */
    public <T> T call(SemaphoreKeys keys, ScriptCall<T> call) {
        return await(keys, send(keys, call));
    }

    /**
     * Waits for the reply of a call sent with {@link #send} on the caller's thread, at most the
     * command timeout (the future enforces it).
     *
     * @throws SemaphoreUnavailableException when the call failed, timed out or the wait was interrupted
     */
    public <T> T await(SemaphoreKeys keys, CompletableFuture<T> reply) {
        try {
            return reply.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SemaphoreUnavailableException(keys.name(), "Interrupted while waiting for Redis for semaphore '"
                    + keys.name() + "'", e);
        } catch (ExecutionException e) {
            throw unavailable(keys.name(), Objects.requireNonNullElse(e.getCause(), e));
        }
    }

    /**
     * @return the failure of a call sent here as the {@link SemaphoreException} it carries, for a
     *         caller that continues on the future of {@link #send}
     */
    public static SemaphoreException failure(Throwable error) {
        Throwable cause = cause(error);
        return cause instanceof SemaphoreException e ? e
                : new SemaphoreUnavailableException("Redis unavailable: " + cause.getMessage(), cause);
    }

    /** EVALSHA; on a server whose script cache lacks the script (restart, failover, SCRIPT FLUSH), EVAL. */
    static CompletableFuture<List<Object>> eval(RedisScriptingAsyncCommands<byte[], byte[]> redis,
                                                ScriptCall<?> call, byte[][] keys, byte[][] args) {
        @SuppressWarnings("rawtypes")
        RedisScript<List> script = call.script();
        return redis.<List<Object>>evalsha(script.getSha1(), ScriptOutputType.MULTI, keys, args)
                .toCompletableFuture()
                .exceptionallyCompose(error -> cause(error) instanceof RedisNoScriptException
                        ? redis.<List<Object>>eval(script.getScriptAsString(), ScriptOutputType.MULTI, keys, args)
                                .toCompletableFuture()
                        : CompletableFuture.failedFuture(error));
    }

    /** The reply, parsed, within {@code limit}; any failure as {@link SemaphoreUnavailableException}. */
    static <R, T> CompletableFuture<T> within(SemaphoreKeys keys, CompletableFuture<R> reply, Duration limit,
                                              Function<R, T> parse) {
        return reply.orTimeout(limit.toNanos(), TimeUnit.NANOSECONDS)
                .handle((value, error) -> {
                    if (error != null) {
                        Throwable cause = cause(error);
                        throw unavailable(keys.name(), cause instanceof TimeoutException
                                ? new RedisCommandTimeoutException("no reply within " + limit.toMillis() + " ms")
                                : cause);
                    }
                    if (value == null) {
                        throw new SemaphoreUnavailableException(keys.name(),
                                "Redis gave no reply for semaphore '" + keys.name() + "'", null);
                    }
                    return parse.apply(value);
                });
    }

    static byte[][] encode(List<String> args) {
        byte[][] bytes = new byte[args.size()][];
        for (int i = 0; i < args.size(); i++) {
            bytes[i] = args.get(i).getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    private static SemaphoreException unavailable(String name, Throwable error) {
        if (error instanceof SemaphoreException e) {
            return e;
        }
        return new SemaphoreUnavailableException(name,
                "Redis unavailable for semaphore '" + name + "': " + error.getMessage(), error);
    }

    private static Throwable cause(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
