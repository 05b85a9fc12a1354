package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnection;

/**
 * The library's connection ({@link RedisConnections}): its commands, and the Spring connection
 * it was lent from when it is the factory's (closed through it), else null; how many calls sent on
 * it are still out, and whether it was dropped for a {@code READONLY} ({@link ReadOnlyRetirement}).
 */
final class Link {

    private final StatefulConnection<byte[], byte[]> connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> commands;
    private final @Nullable RedisConnection lent;
    /** Calls sent on it whose reply has not been handled yet. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Dropped for a READONLY (set under the lock of {@link RedisConnections}): its refused calls are sent again. */
    private volatile boolean retired;

    Link(StatefulConnection<byte[], byte[]> connection, RedisClusterAsyncCommands<byte[], byte[]> commands,
         @Nullable RedisConnection lent) {
        this.connection = connection;
        this.commands = commands;
        this.lent = lent;
    }

    /** @return the Lettuce connection */
    StatefulConnection<byte[], byte[]> connection() {
        return connection;
    }

    /** @return its commands */
    RedisClusterAsyncCommands<byte[], byte[]> commands() {
        return commands;
    }

    boolean isOpen() {
        return connection.isOpen();
    }

    void close() {
        if (lent != null) {
            DedicatedConnections.closeQuietly(lent);
        } else {
            connection.closeAsync();
        }
    }

    /** A call is about to be sent on it: counted until {@link #settled()}. */
    void sending() {
        inFlight.incrementAndGet();
    }

    /**
     * A call sent on it is back, its reply handled (or it was never sent).
     *
     * @return whether it was the last one out on a connection dropped for a READONLY
     */
    boolean settled() {
        return inFlight.decrementAndGet() == 0 && retired;
    }

    /** @return whether no call sent on it is out */
    boolean idle() {
        return inFlight.get() == 0;
    }

    /** Marks it dropped for a READONLY; under the lock of {@link RedisConnections}. */
    void retire() {
        retired = true;
    }

    /** @return whether it was dropped for a READONLY: a call it refuses is sent again on the new one */
    boolean retired() {
        return retired;
    }
}
