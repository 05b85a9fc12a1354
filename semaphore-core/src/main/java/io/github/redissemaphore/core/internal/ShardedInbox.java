package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.redis.SemaphoreKeys;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.ObjLongConsumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbox of a JVM on a Redis Cluster of Redis 7 or newer: sharded pub/sub. Each semaphore has
 * a channel of this JVM's in its own slot ({@code <prefix>:{<name>}:inbox:<client id>}, the hash
 * tag of its keys), to which its scripts {@code SPUBLISH}: a grant travels to the shard that owns
 * the semaphore and to nobody else, instead of being broadcast over the cluster bus to every node
 * as a {@code PUBLISH} is, and it works where a script may only publish within its own slot.
 * Lettuce routes each {@code SSUBSCRIBE} to the node that serves the channel's slot.
 */
final class ShardedInbox implements Inbox {

    private static final Logger log = LoggerFactory.getLogger(ShardedInbox.class);

    private final RedisClusterClient client;
    private final String clientId;
    private final ObjLongConsumer<String> grants;
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    /** One ordered thread, so a slow callback of a completed future never stalls Redis I/O. */
    private final ExecutorService dispatch = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "semaphore-inbox");
        thread.setDaemon(true);
        return thread;
    });
    private volatile StatefulRedisClusterPubSubConnection<String, String> connection;
    private volatile boolean stopped;

    ShardedInbox(RedisClusterClient client, String clientId, ObjLongConsumer<String> grants) {
        this.client = client;
        this.clientId = clientId;
        this.grants = grants;
    }

    @Override
    public String channel(SemaphoreKeys keys) {
        return keys.channel(clientId);
    }

    @Override
    public void listenFor(SemaphoreKeys keys) {
        String channel = channel(keys);
        if (stopped || subscribed.contains(channel)) {
            return;
        }
        try {
            connection().sync().ssubscribe(channel);
            subscribed.add(channel);
        } catch (RuntimeException e) {
            // The tick serves these waiters meanwhile; the next wait on the semaphore tries again.
            log.debug("Could not subscribe to {} ({}); its waiters are served by the renewal tick", channel,
                    e.getMessage());
        }
    }

    @Override
    public void forget(SemaphoreKeys keys) {
        String channel = channel(keys);
        StatefulRedisClusterPubSubConnection<String, String> current = connection;
        if (subscribed.remove(channel) && current != null) {
            current.async().sunsubscribe(channel);
        }
    }

    @Override
    public void start() {
        try {
            connection();
        } catch (RuntimeException e) {
            log.warn("Could not connect for sharded pub/sub ({}); retrying on the first wait, waiters are served by"
                    + " the renewal tick meanwhile", e.getMessage());
        }
    }

    private synchronized StatefulRedisClusterPubSubConnection<String, String> connection() {
        if (connection == null) {
            StatefulRedisClusterPubSubConnection<String, String> created = client.connectPubSub();
            created.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void smessage(String channel, String message) {
                    dispatch.execute(() -> Inbox.deliver(message, grants));
                }
            });
            connection = created;
        }
        return connection;
    }

    @Override
    public synchronized void stop() {
        stopped = true;
        if (connection != null) {
            connection.closeAsync();
        }
        dispatch.shutdown();
    }
}
