package io.github.redissemaphore.core.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the semaphore scripts: the one place that knows their arguments and replies. Every method
 * is exactly one Redis call (EVALSHA; EVAL once more when the server's script cache does not have
 * the script, as after a restart, a failover or {@code SCRIPT FLUSH}), and any Redis failure
 * surfaces as {@link SemaphoreUnavailableException}.
 *
 * <p>Calls go straight to Lettuce's asynchronous API on the connection factory's shared
 * connection, so no thread waits for a reply unless it asks to: the {@code …Async} methods return
 * at once (background clean-ups, renewals and deadlines never hold a thread while Redis is slow or
 * down), and the others wait for the reply on the caller's thread. Each call fails after the
 * factory's command timeout.
 */
public final class SemaphoreCommands {

    /** Index of a script's own first entry: after used, limit, waiters, server time and earliest lease end. */
    private static final int OWN = 5;

    private final LettuceConnectionFactory connectionFactory;
    private final SemaphoreScripts scripts;
    private final Duration timeout;

    public SemaphoreCommands(RedisConnectionFactory connectionFactory, SemaphoreScripts scripts) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalArgumentException("The semaphore needs a LettuceConnectionFactory (Spring Data Redis with"
                    + " Lettuce), but got " + connectionFactory);
        }
        this.connectionFactory = lettuce;
        this.scripts = scripts;
        this.timeout = lettuce.getClientConfiguration().getCommandTimeout();
    }

    /** @return how long a call may take before it fails: the connection factory's command timeout */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Usage figures every script returns: the values for gauges, free of charge.
     * {@code serverMicros} (Redis server time) tells which of two figures is newer;
     * {@code earliestLeaseEndMillis} is how long until the earliest lease ends, at most (-1: no
     * lease), so a JVM with waiters can call again the moment an expired lease frees a permit.
     */
    public record Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis) {
        /** @return permits free now */
        public int available() {
            return Math.max(limit - used, 0);
        }
    }

    /** What {@code acquire} did. */
    public record Acquired(Usage usage, Status status, long token) {
        /** Granted, queued or refused. */
        public enum Status { REFUSED, GRANTED, QUEUED }
    }

    /** What {@code release} did; {@code released} is false when the id held nothing. */
    public record Released(Usage usage, boolean released) {
    }

    /** What {@code renew} found: per id, a token (holds), {@link #WAITING} or {@link #GONE}. */
    public record Renewed(Usage usage, int renewed, List<Long> statuses) {
        /** Still in the queue. */
        public static final long WAITING = 0;
        /** Neither held nor waiting any more. */
        public static final long GONE = -1;
    }

    /** What {@code cancel} did: {@code grantedToken} is 0 when the waiter left the queue. */
    public record Cancelled(Usage usage, long grantedToken) {
    }

    /** What {@code state} read, with the usage figures every reply carries. */
    public record State(Usage usage, SemaphoreState state) {
    }

    /** Grants, queues or refuses {@code count} permits for the lease {@code id}. */
    public Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, boolean wait,
                            boolean fair, Duration heartbeat, String inbox, String owner) {
        return await(keys, acquireAsync(keys, limit, id, count, lease, wait, fair, heartbeat, inbox, owner));
    }

    /** {@link #acquire}, without waiting for the reply. */
    public CompletableFuture<Acquired> acquireAsync(SemaphoreKeys keys, int limit, String id, int count,
                                                    Duration lease, boolean wait, boolean fair, Duration heartbeat,
                                                    String inbox, String owner) {
        return run(keys, scripts.acquire(), reply -> new Acquired(usage(reply),
                        Acquired.Status.values()[(int) number(reply, OWN)], number(reply, OWN + 1)),
                String.valueOf(limit), id, String.valueOf(count), millis(lease), flag(wait), flag(fair),
                millis(heartbeat), inbox, owner);
    }

    /** Gives the lease {@code id} back. */
    public Released release(SemaphoreKeys keys, int limit, String id) {
        return await(keys, releaseAsync(keys, limit, id));
    }

    /** Gives the lease {@code id} back, without waiting for the reply. */
    public CompletableFuture<Released> releaseAsync(SemaphoreKeys keys, int limit, String id) {
        return run(keys, scripts.release(), reply -> new Released(usage(reply), number(reply, OWN) == 1),
                String.valueOf(limit), id);
    }

    /** Extends these leases and refreshes these waiters, all of one semaphore, in one call. */
    public Renewed renew(SemaphoreKeys keys, int limit, Duration heartbeat, List<String> ids) {
        return await(keys, renewAsync(keys, limit, heartbeat, ids));
    }

    /** {@link #renew}, without waiting for the reply. */
    public CompletableFuture<Renewed> renewAsync(SemaphoreKeys keys, int limit, Duration heartbeat,
                                                 List<String> ids) {
        String[] args = new String[ids.size() + 2];
        args[0] = String.valueOf(limit);
        args[1] = millis(heartbeat);
        for (int i = 0; i < ids.size(); i++) {
            args[i + 2] = ids.get(i);
        }
        return run(keys, scripts.renew(), reply -> {
            List<Long> statuses = new ArrayList<>(ids.size());
            for (int i = OWN + 1; i < reply.size(); i++) {
                statuses.add(number(reply, i));
            }
            return new Renewed(usage(reply), (int) number(reply, OWN), statuses);
        }, args);
    }

    /** Takes waiter {@code id} out of the queue; with {@code release}, gives back a grant it got meanwhile. */
    public Cancelled cancel(SemaphoreKeys keys, int limit, String id, boolean release) {
        return await(keys, cancelAsync(keys, limit, id, release));
    }

    /** {@link #cancel}, without waiting for the reply. */
    public CompletableFuture<Cancelled> cancelAsync(SemaphoreKeys keys, int limit, String id, boolean release) {
        return run(keys, scripts.cancel(), reply -> new Cancelled(usage(reply), number(reply, OWN)),
                String.valueOf(limit), id, flag(release));
    }

    /** Reads the semaphore, listing at most {@code most} holders and waiters. */
    public State state(SemaphoreKeys keys, int limit, int most) {
        return await(keys, run(keys, scripts.state(), reply -> {
            Usage usage = usage(reply);
            List<SemaphoreState.Holder> holders = new ArrayList<>();
            for (Object entry : (List<?>) reply.get(OWN)) {
                List<?> h = (List<?>) entry;
                holders.add(new SemaphoreState.Holder(text(h.get(0)), ((Number) h.get(1)).intValue(),
                        ((Number) h.get(2)).longValue(), text(h.get(3)),
                        Duration.ofMillis(Math.max(((Number) h.get(4)).longValue(), 0))));
            }
            List<SemaphoreState.Waiter> waiters = new ArrayList<>();
            for (Object entry : (List<?>) reply.get(OWN + 1)) {
                List<?> w = (List<?>) entry;
                waiters.add(new SemaphoreState.Waiter(text(w.get(0)), ((Number) w.get(1)).intValue(), text(w.get(2))));
            }
            return new State(usage, new SemaphoreState(keys.name(), usage.limit(), usage.used(), usage.available(),
                    holders, waiters));
        }, String.valueOf(limit), String.valueOf(most)));
    }

    /**
     * Sends one script call. The reply is parsed where it completes; a failure of any kind
     * (including the command timeout) completes the future with {@link SemaphoreUnavailableException}.
     */
    @SuppressWarnings("rawtypes")
    private <T> CompletableFuture<T> run(SemaphoreKeys keys, RedisScript<List> script, Function<List<Object>, T> parse,
                                         String... args) {
        byte[][] keyBytes = keys.bytes();
        byte[][] argBytes = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            argBytes[i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        CompletableFuture<List<Object>> reply;
        try {
            RedisConnection connection = connectionFactory.getConnection();
            RedisScriptingAsyncCommands<byte[], byte[]> redis = nativeCommands(connection);
            reply = redis.<List<Object>>evalsha(script.getSha1(), ScriptOutputType.MULTI, keyBytes, argBytes)
                    .toCompletableFuture()
                    // A server with an empty script cache (restart, failover, SCRIPT FLUSH): EVAL loads it.
                    .exceptionallyCompose(error -> cause(error) instanceof RedisNoScriptException
                            ? redis.<List<Object>>eval(script.getScriptAsString(), ScriptOutputType.MULTI, keyBytes,
                                    argBytes).toCompletableFuture()
                            : CompletableFuture.failedFuture(error));
            // Held until the reply is in: a factory that does not share its native connection
            // lends one from its pool for the call.
            reply.whenComplete((value, error) -> connection.close());
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .handle((value, error) -> {
                    if (error != null) {
                        Throwable cause = cause(error);
                        throw unavailable(keys.name(), cause instanceof TimeoutException
                                ? new RedisCommandTimeoutException("no reply within the command timeout of "
                                        + timeout.toMillis() + " ms") : cause);
                    }
                    if (value == null) {
                        throw new SemaphoreUnavailableException("Redis gave no reply for semaphore '" + keys.name() + "'");
                    }
                    return parse.apply(value);
                });
    }

    /** The factory's native connection (shared by default, which Lettuce reconnects by itself). */
    @SuppressWarnings("unchecked")
    private static RedisScriptingAsyncCommands<byte[], byte[]> nativeCommands(RedisConnection connection) {
        return (RedisScriptingAsyncCommands<byte[], byte[]>) ((LettuceConnection) connection).getNativeConnection();
    }

    /**
     * Waits for the reply of an {@code …Async} call on the caller's thread, at most the command
     * timeout (the future enforces it).
     *
     * @throws SemaphoreUnavailableException when the call failed, timed out or the wait was interrupted
     */
    public <T> T await(SemaphoreKeys keys, CompletableFuture<T> reply) {
        try {
            return reply.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SemaphoreUnavailableException("Interrupted while waiting for Redis for semaphore '"
                    + keys.name() + "'", e);
        } catch (ExecutionException e) {
            throw unavailable(keys.name(), e.getCause());
        }
    }

    /**
     * @return the failure of a call of this class as the {@link SemaphoreException} it carries,
     *         for a caller that continues on the future of an {@code …Async} method
     */
    public static SemaphoreException failure(Throwable error) {
        Throwable cause = cause(error);
        return cause instanceof SemaphoreException e ? e
                : new SemaphoreUnavailableException("Redis unavailable: " + cause.getMessage(), cause);
    }

    private static SemaphoreException unavailable(String name, Throwable error) {
        if (error instanceof SemaphoreException e) {
            return e;
        }
        return new SemaphoreUnavailableException("Redis unavailable for semaphore '" + name + "': " + error.getMessage(),
                error);
    }

    private static Throwable cause(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private static Usage usage(List<Object> reply) {
        return new Usage((int) number(reply, 0), (int) number(reply, 1), (int) number(reply, 2), number(reply, 3),
                number(reply, 4));
    }

    private static long number(List<Object> reply, int index) {
        return ((Number) reply.get(index)).longValue();
    }

    private static String text(Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    private static String millis(Duration duration) {
        return String.valueOf(duration.toMillis());
    }

    private static String flag(boolean value) {
        return value ? "1" : "0";
    }
}
