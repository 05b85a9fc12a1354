package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.lettuce.core.api.async.RedisAsyncCommands;
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
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Lends a connection of its own, from the factory, to a call that blocks the connection it is
 * sent on ({@code WAIT}, for {@link ReplicaWait} and {@link WaitCheck}), so other callers'
 * commands never queue behind it on the library's connection ({@link RedisConnections}). On a
 * Redis Cluster, the call goes to the master of the semaphore's slot. Whether Redis answered is
 * noted as for any call.
 */
public final class DedicatedConnections {

    private final LettuceConnectionFactory connectionFactory;
    /** Where a connection is lent (connecting or borrowing from a pool blocks), in the caller's observation. */
    private final Executor lender;
    private final AnswerTracker answers;
    /** The factory's command timeout: Lettuce's bound on a connection lent by the factory. */
    private final Duration timeout;

    /** @param lender where a connection of its own is lent for a call, in the caller's observation */
    public DedicatedConnections(RedisConnections connections, Executor lender) {
        this.connectionFactory = connections.factory();
        this.answers = connections.answers();
        this.lender = Objects.requireNonNull(lender, "lender");
        this.timeout = connectionFactory.getClientConfiguration().getCommandTimeout();
    }

    /**
     * @return how long Lettuce lets a command run on a connection of its own: the factory's
     *         command timeout, as such a connection is the factory's
     */
    Duration timeout() {
        return timeout;
    }

    /**
     * Sends {@code command} on a connection of its own, and completes {@code reply} with its
     * outcome. Getting that connection connects or borrows from a pool, so it is done on the
     * {@link #lender}; the connection is closed on {@code closer} (closing blocks, which Lettuce's
     * event loop must not).
     */
    <R> void send(CompletableFuture<R> reply, SemaphoreKeys keys, Executor closer,
                  Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command) {
        try {
            lender.execute(() -> {
                RedisConnection connection = null;
                try {
                    connection = connectionFactory.getConnection();
                    RedisClusterAsyncCommands<byte[], byte[]> redis = toSlotMaster(commandsOf(connection), keys);
                    if (reply.isDone()) {
                        closeQuietly(connection);
                        return;
                    }
                    CompletableFuture<R> sent = command.apply(redis);
                    RedisConnection used = connection;
                    sent.whenCompleteAsync((value, error) -> closeQuietly(used), closer);
                    sent.whenComplete((value, error) -> answers.complete(reply, value, error));
                } catch (RuntimeException e) {
                    if (connection != null) {
                        closeQuietly(connection);
                    }
                    reply.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(CallFailures.closed());
        }
    }

    /**
     * The commands of a connection no other caller uses: in a pipeline, Spring Data Redis hands
     * out a dedicated connection (from the factory's pool, if it has one) instead of the shared
     * one. Its commands are flushed as they are sent: the factory's pipelining flush policy (an
     * application may set {@code flushOnClose()} or {@code buffered(n)}) holds back only what goes
     * through Spring's pipeline, and turns automatic flushing off on the connection until the
     * pipeline closes, which would leave the calls sent on it unsent until they time out.
     */
    static RedisClusterAsyncCommands<byte[], byte[]> commandsOf(RedisConnection connection) {
        connection.openPipeline();
        RedisClusterAsyncCommands<byte[], byte[]> redis = ((LettuceConnection) connection).getNativeConnection();
        if (redis instanceof RedisAsyncCommands<byte[], byte[]> standalone) {
            standalone.getStatefulConnection().setAutoFlushCommands(true);
        }
        if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            // Applies to its node connections too, the one to the slot's master included.
            cluster.getStatefulConnection().setAutoFlushCommands(true);
        }
        return redis;
    }

    /** On a Cluster, the connection to the master of the semaphore's slot, as {@code WAIT} has no key to route by. */
    private static RedisClusterAsyncCommands<byte[], byte[]> toSlotMaster(
            RedisClusterAsyncCommands<byte[], byte[]> redis, SemaphoreKeys keys) {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            RedisClusterNode master = cluster.getStatefulConnection().getPartitions()
                    .getMasterBySlot(SlotHash.getSlot(keys.encoded().get(0)));
            if (master == null) {
                throw new SemaphoreUnavailableException(keys.name(), Reason.UNAVAILABLE,
                        "No master known for semaphore '" + keys.name() + "'", null);
            }
            return cluster.getConnection(master.getNodeId());
        }
        return redis;
    }

    /** Closes a connection the factory lent, ending its pipeline first. */
    static void closeQuietly(RedisConnection connection) {
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
}
