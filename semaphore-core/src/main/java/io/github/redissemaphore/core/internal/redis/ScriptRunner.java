package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs script calls: each is exactly one Redis call (EVALSHA; EVAL once more when the server's
 * script cache does not have the script, as after a restart, a failover or {@code SCRIPT FLUSH}),
 * fails after {@link RedisConnections#timeout()} counted from the moment it was asked for (waiting
 * for a connection is part of the call), and surfaces any Redis failure as
 * {@link SemaphoreUnavailableException}. {@link #send} returns at once (background clean-ups,
 * renewals and deadlines never hold a thread while Redis is slow or down); {@link #call} waits for
 * the reply on the caller's thread.
 */
public final class ScriptRunner {

    private final RedisConnections connections;

    public ScriptRunner(RedisConnections connections) {
        this.connections = connections;
    }

    /** @return how long a call may take before it fails */
    public Duration timeout() {
        return connections.timeout();
    }

    /** @return whether Redis answers now, as far as this JVM can tell without a call (see {@link RedisConnections}) */
    public boolean answering() {
        return connections.answering();
    }

    /**
     * @return since when Redis has answered nothing while a call was out (see
     *         {@link RedisConnections#unansweredSinceNanos()})
     */
    public long unansweredSinceNanos() {
        return connections.unansweredSinceNanos();
    }

    /** Sends {@code call} on the semaphore's keys, without waiting for the reply. */
    public <T> CompletableFuture<T> send(SemaphoreKeys keys, ScriptCall<T> call) {
        CompletableFuture<List<Object>> reply = new CompletableFuture<>();
        byte[][] args = encode(keys.argv(call.args()));
        connections.send(reply, redis -> eval(redis, call, keys.bytes(), args));
        return RefusedCalls.explained(connections.within(keys, reply, timeout(), value -> call.parse(new Reply(value))),
                keys, call, "");
    }

    /**
     * Sends {@code PING} on the library's connection, the probe of a degraded mode: it completes
     * when Redis answers, and fails like a script call (no connection, no answer within
     * {@link #timeout()}).
     */
    public CompletableFuture<Void> ping(SemaphoreKeys keys) {
        CompletableFuture<String> reply = new CompletableFuture<>();
        connections.send(reply, redis -> ((BaseRedisAsyncCommands<byte[], byte[]>) redis).ping().toCompletableFuture());
        return connections.within(keys, reply, timeout(), pong -> null);
    }

    /** Sends {@code call} and waits for its reply, at most {@link #timeout()}. */
    public <T> T call(SemaphoreKeys keys, ScriptCall<T> call) {
        return await(keys, send(keys, call));
    }

    /**
     * Waits for the reply of a call sent with {@link #send} on the caller's thread, at most
     * {@link #timeout()} (the future enforces it).
     *
     * @throws SemaphoreUnavailableException when the call failed, timed out or the wait was interrupted
     */
    public <T> T await(SemaphoreKeys keys, CompletableFuture<T> reply) {
        try {
            return reply.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SemaphoreUnavailableException(keys.name(), Reason.UNAVAILABLE,
                    "Interrupted while waiting for Redis for semaphore '"
                    + keys.name() + "'", e);
        } catch (ExecutionException e) {
            throw CallFailures.unavailable(keys.name(), Objects.requireNonNullElse(e.getCause(), e));
        }
    }

    /**
     * @return the failure of a call sent here as the {@link SemaphoreException} it carries, for a
     *         caller that continues on the future of {@link #send}
     */
    public static SemaphoreException failure(Throwable error) {
        Throwable cause = cause(error);
        return cause instanceof SemaphoreException e ? e
                : new SemaphoreUnavailableException(null, Reason.of(cause), "Redis unavailable: " + cause.getMessage(),
                        cause);
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

    static byte[][] encode(List<String> args) {
        byte[][] bytes = new byte[args.size()][];
        for (int i = 0; i < args.size(); i++) {
            bytes[i] = args.get(i).getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    private static Throwable cause(Throwable error) {
        return CallFailures.cause(error);
    }
}
