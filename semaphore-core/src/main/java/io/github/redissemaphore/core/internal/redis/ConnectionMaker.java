package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Makes the library's connection ({@link RedisConnections}): by the factory's Lettuce client
 * (same address, credentials, TLS, database, client options and resources as the application's
 * connections), with the library's timeout as its command timeout; or, for a client with no
 * address of its own (static master/replica), the factory's dedicated connection. Used by one
 * connect at a time.
 */
final class ConnectionMaker {

    private final LettuceConnectionFactory connectionFactory;
    private final Duration timeout;
    private final LettuceReconnects reconnects;
    /** The client cannot connect by itself (no address of its own): lend the factory's dedicated connection. */
    private boolean lendFromFactory;

    ConnectionMaker(LettuceConnectionFactory connectionFactory, Duration timeout, LettuceReconnects reconnects) {
        this.connectionFactory = connectionFactory;
        this.timeout = timeout;
        this.reconnects = reconnects;
    }

    /** @return a connection of the registry's own, open; its client's own reconnects are heard by {@code reconnects} */
    Link open() {
        AbstractRedisClient client = lendFromFactory ? null : connectionFactory.getNativeClient();
        if (client instanceof RedisClusterClient cluster) {
            StatefulRedisClusterConnection<byte[], byte[]> connection = cluster.connect(ByteArrayCodec.INSTANCE);
            connection.setTimeout(timeout);
            return new Link(connection, connection.async(), null);
        }
        if (client instanceof RedisClient standalone) {
            reconnects.listenTo(standalone);
            try {
                StatefulRedisConnection<byte[], byte[]> connection = standalone.connect(ByteArrayCodec.INSTANCE);
                connection.setTimeout(timeout);
                return new Link(connection, connection.async(), null);
            } catch (IllegalStateException e) {
                // "RedisURI is not available": a static master/replica client, whose nodes only
                // the factory knows.
                lendFromFactory = true;
            }
        }
        RedisConnection lent = connectionFactory.getConnection();
        try {
            RedisClusterAsyncCommands<byte[], byte[]> commands = DedicatedConnections.commandsOf(lent);
            StatefulConnection<byte[], byte[]> connection = commands instanceof RedisAsyncCommands<byte[], byte[]> one
                    ? one.getStatefulConnection()
                    : ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) commands).getStatefulConnection();
            return new Link(connection, commands, lent);
        } catch (RuntimeException e) {
            DedicatedConnections.closeQuietly(lent);
            throw e;
        }
    }
}
