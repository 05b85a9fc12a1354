package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnection;

/**
 * The library's connection ({@link RedisConnections}): its commands, and the Spring connection
 * it was lent from when it is the factory's (closed through it), else null.
 */
record Link(StatefulConnection<byte[], byte[]> connection,
            RedisClusterAsyncCommands<byte[], byte[]> commands, @Nullable RedisConnection lent) {

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
}
