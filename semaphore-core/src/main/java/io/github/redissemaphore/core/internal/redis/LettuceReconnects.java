package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.api.StatefulConnection;

import java.net.SocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hears Lettuce make the library's connection anew by itself (its own reconnect, which on a
 * Sentinel setup asks the Sentinel for the master again): to the registry, that is a new
 * connection as one {@link ConnectionKeeper} makes is, maybe to another server
 * ({@link AnswerTracker#reconnected()}).
 */
final class LettuceReconnects {

    /** The connection's category, which users configure for what the library's connection does. */
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    /** Where the registry hears of it: off Lettuce's I/O threads. */
    private final Executor connector;
    private final AnswerTracker answers;
    /** Guards {@link #listened} and {@link #closed}. */
    private final ReentrantLock lock = new ReentrantLock();
    /** The client {@link #reconnects} listens to, or null. */
    private @Nullable AbstractRedisClient listened;
    private volatile boolean closed;
    /** The library's connection now (read off the lock), or null. */
    private volatile @Nullable StatefulConnection<byte[], byte[]> current;
    private final RedisConnectionStateListener reconnects = new RedisConnectionStateListener() {
        @Override
        public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
            if (connection != current || closed) {
                return;
            }
            try {
                connector.execute(() -> {
                    log.info("The semaphores' connection to Redis was made anew ({})", address);
                    answers.reconnected();
                });
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    };

    LettuceReconnects(Executor connector, AnswerTracker answers) {
        this.connector = connector;
        this.answers = answers;
    }

    /** Listens to the reconnects of {@code client}'s connections (once). */
    void listenTo(AbstractRedisClient client) {
        lock.lock();
        try {
            if (listened == null && !closed) {
                client.addListener(reconnects);
                listened = client;
            }
        } finally {
            lock.unlock();
        }
    }

    /** @param connection the library's connection now, whose reconnects count; null while there is none */
    void follow(@Nullable StatefulConnection<byte[], byte[]> connection) {
        current = connection;
    }

    /** Stops listening. Idempotent. */
    void close() {
        lock.lock();
        try {
            closed = true;
            current = null;
            if (listened != null) {
                listened.removeListener(reconnects);
                listened = null;
            }
        } finally {
            lock.unlock();
        }
    }
}
