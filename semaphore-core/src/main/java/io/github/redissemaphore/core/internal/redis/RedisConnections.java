package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Holds the connections of one registry: Lettuce's asynchronous API on the connection factory's
 * connection, so no thread waits for a reply unless it asks to, and a connection of its own for a
 * call that blocks the connection it is sent on ({@code WAIT}).
 *
 * <p>Where a connection is lent: any thread may send, the scheduler's included, so lending must
 * not block it. With the factory's default, one shared native connection that is not validated,
 * lending it once it exists is a lookup (Lettuce keeps that one connection and reconnects it by
 * itself), so the call is sent right there: no thread hop on the hot path, and the wrapper is given
 * back at once (closing it does nothing to the shared connection). The first call, and every call
 * on a factory that lends per call (no sharing: a connect or a pool per call; validation: a PING),
 * lends on the {@link #lender} instead, and gives the connection back there once the reply is in.
 * A call whose caller gave up before the connection came is not sent at all: a late acquire must
 * not land after the clean-up of its failure.
 */
public final class RedisConnections {

    private final LettuceConnectionFactory connectionFactory;
    private final Duration timeout;
    /**
     * Where a connection is lent (and given back) when that may take I/O: a connect, a PING, a
     * pool. Never Lettuce's event loop, and never the scheduler that times deadlines and renewals.
     */
    private final Executor lender;
    /**
     * The factory shares one native connection, does not validate it, and has lent it once: from
     * now on lending it does no I/O (Lettuce reconnects that connection by itself).
     */
    private volatile boolean sharedConnectionLent;

    /**
     * @param lender where a connection is lent and given back when that may block (a connect, a
     *               validation, a pool): not Lettuce's event loop, and not a thread whose lateness
     *               delays anything else
     * @throws IllegalArgumentException unless the factory is Lettuce's
     */
    public RedisConnections(RedisConnectionFactory connectionFactory, Executor lender) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalArgumentException("The semaphore needs a LettuceConnectionFactory (Spring Data Redis with"
                    + " Lettuce), but got " + connectionFactory);
        }
        this.connectionFactory = lettuce;
        this.timeout = lettuce.getClientConfiguration().getCommandTimeout();
        this.lender = Objects.requireNonNull(lender, "lender");
    }

    /** @return how long a call may take before it fails: the connection factory's command timeout */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Sends {@code command} on the factory's connection and completes {@code reply} with its
     * outcome; where it is sent is said above.
     */
    <R> void send(CompletableFuture<R> reply,
                  Function<RedisScriptingAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command) {
        if (sharedConnectionLent) {
            try {
                RedisConnection connection = connectionFactory.getConnection();
                try {
                    command.apply(nativeCommands(connection)).whenComplete((value, error) ->
                            complete(reply, value, error));
                } finally {
                    connection.close();
                }
            } catch (RuntimeException e) {
                reply.completeExceptionally(e);
            }
        } else {
            lendAndSend(reply, command);
        }
    }

    /** On the lender: lends a connection, sends the call on it unless the caller gave up, gives it back after. */
    private <R> void lendAndSend(CompletableFuture<R> reply,
                                 Function<RedisScriptingAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command) {
        try {
            lender.execute(() -> {
                RedisConnection connection;
                try {
                    connection = connectionFactory.getConnection();
                } catch (RuntimeException e) {
                    reply.completeExceptionally(e);
                    return;
                }
                try {
                    if (reply.isDone()) {
                        closeQuietly(connection);
                        return;
                    }
                    CompletableFuture<R> sent = command.apply(nativeCommands(connection));
                    if (connectionFactory.getShareNativeConnection() && !connectionFactory.getValidateConnection()) {
                        sharedConnectionLent = true;
                    }
                    sent.whenCompleteAsync((value, error) -> closeQuietly(connection), lender);
                    sent.whenComplete((value, error) -> complete(reply, value, error));
                } catch (RuntimeException e) {
                    closeQuietly(connection);
                    reply.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new SemaphoreUnavailableException("The semaphore registry is closed", e));
        }
    }

    /**
     * Sends {@code command} on a connection of its own, and completes {@code reply} with its
     * outcome. Getting that connection connects or borrows from a pool, so it is done on the
     * {@link #lender}; the connection is closed on {@code closer} (closing blocks, which Lettuce's
     * event loop must not).
     */
    <R> void sendDedicated(CompletableFuture<R> reply, SemaphoreKeys keys, Executor closer,
                           Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command) {
        try {
            lender.execute(() -> {
                RedisConnection connection = null;
                try {
                    connection = connectionFactory.getConnection();
                    RedisClusterAsyncCommands<byte[], byte[]> redis = dedicatedCommands(connection, keys);
                    if (reply.isDone()) {
                        closeQuietly(connection);
                        return;
                    }
                    CompletableFuture<R> sent = command.apply(redis);
                    RedisConnection used = connection;
                    sent.whenCompleteAsync((value, error) -> closeQuietly(used), closer);
                    sent.whenComplete((value, error) -> complete(reply, value, error));
                } catch (RuntimeException e) {
                    if (connection != null) {
                        closeQuietly(connection);
                    }
                    reply.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new SemaphoreUnavailableException("The semaphore registry is closed", e));
        }
    }

    private static <V> void complete(CompletableFuture<V> reply, V value, Throwable error) {
        if (error != null) {
            reply.completeExceptionally(error);
        } else {
            reply.complete(value);
        }
    }

    /**
     * A connection no other caller uses: in a pipeline, Spring Data Redis hands out a dedicated
     * connection (from the factory's pool, if it has one) instead of the shared one. Its commands
     * are flushed as they are sent: the factory's pipelining flush policy (an application may set
     * {@code flushOnClose()} or {@code buffered(n)}) holds back only what goes through Spring's
     * pipeline, and turns automatic flushing off on the connection until the pipeline closes, which
     * would leave the script, the marker and {@code WAIT} unsent until they time out. On a Cluster,
     * the connection to the master of the semaphore's slot, as {@code WAIT} has no key to route by.
     */
    private static RedisClusterAsyncCommands<byte[], byte[]> dedicatedCommands(RedisConnection connection,
                                                                                SemaphoreKeys keys) {
        connection.openPipeline();
        RedisClusterAsyncCommands<byte[], byte[]> redis = ((LettuceConnection) connection).getNativeConnection();
        if (redis instanceof RedisAsyncCommands<byte[], byte[]> standalone) {
            standalone.getStatefulConnection().setAutoFlushCommands(true);
        }
        if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            // Applies to its node connections too, the one to the slot's master included.
            cluster.getStatefulConnection().setAutoFlushCommands(true);
            RedisClusterNode master = cluster.getStatefulConnection().getPartitions()
                    .getMasterBySlot(SlotHash.getSlot(keys.encoded().get(0)));
            if (master == null) {
                throw new SemaphoreUnavailableException(keys.name(),
                        "No master known for semaphore '" + keys.name() + "'", null);
            }
            return cluster.getConnection(master.getNodeId());
        }
        return redis;
    }

    private static void closeQuietly(RedisConnection connection) {
        try {
            connection.closePipeline();
        } catch (RuntimeException ignored) {
            // Nothing was queued through Spring's pipeline: there is nothing to lose here.
        }
        try {
            connection.close();
        } catch (RuntimeException ignored) {
            // A connection that failed to close is Lettuce's to reclaim.
        }
    }

    /** The factory's native connection (shared by default, which Lettuce reconnects by itself). */
    @SuppressWarnings("unchecked")
    private static RedisScriptingAsyncCommands<byte[], byte[]> nativeCommands(RedisConnection connection) {
        return (RedisScriptingAsyncCommands<byte[], byte[]>) ((LettuceConnection) connection).getNativeConnection();
    }
}
