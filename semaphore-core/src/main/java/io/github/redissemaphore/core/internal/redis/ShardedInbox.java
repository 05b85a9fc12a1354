package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ObjLongConsumer;

import org.jspecify.annotations.Nullable;
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
    /**
     * How long a caller's first wait on a semaphore waits for its subscription, so a grant
     * published right after it joins the queue is heard: no longer, so a slow or unreachable node
     * costs a wait at most this (its grant then comes with the next tick).
     */
    private static final Duration SUBSCRIBE_WAIT = Duration.ofMillis(100);

    private final RedisClusterClient client;
    private final String clientId;
    private final ObjLongConsumer<String> grants;
    /** Channel -> its subscription, done when Redis confirmed it (a failed one is tried again). */
    private final Map<String, CompletableFuture<Void>> subscriptions = new ConcurrentHashMap<>();
    /** One ordered thread, so a slow callback of a completed future never stalls Redis I/O. */
    private final ExecutorService dispatch = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "semaphore-inbox");
        thread.setDaemon(true);
        return thread;
    });
    /** Guards {@link #connection}. A lock, not a monitor: connecting is a Redis call (virtual threads). */
    private final ReentrantLock lock = new ReentrantLock();
    private @Nullable CompletableFuture<StatefulRedisClusterPubSubConnection<String, String>> connection;
    private volatile boolean stopped;
    /** Whether a refusal of a channel was logged: once per JVM, not once per semaphore. */
    private final AtomicBoolean refusedOnce = new AtomicBoolean();

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
        if (stopped) {
            return;
        }
        CompletableFuture<Void> subscription = subscriptions.compute(channel(keys), (channel, existing) ->
                existing == null || existing.isCompletedExceptionally() ? subscribe(channel) : existing);
        try {
            subscription.get(SUBSCRIBE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // The tick serves these waiters meanwhile; the next wait tries again if it failed.
        }
    }

    private CompletableFuture<Void> subscribe(String channel) {
        return connection().thenCompose(pubSub -> pubSub.async().ssubscribe(channel).toCompletableFuture())
                .<Void>thenApply(ignored -> null)
                .whenComplete((ignored, error) -> {
                    Refusal refusal = error == null ? null : Refusal.of(error, null);
                    if (refusal != null && refusedOnce.compareAndSet(false, true)) {
                        log.warn("Redis refuses this JVM its inbox channel {} (Redis: \"{}\"): while the scripts may"
                                + " not publish to it, its waiters hear of their grants only at their renewal tick."
                                + " Give the Redis user &{}:*, as in the ACL rule of {} (with its cluster additions)",
                                channel,
                                refusal.reply().strip(), channel.substring(0, channel.indexOf(":{")), Refusal.ACL_DOCS);
                    } else if (error != null) {
                        log.debug("Could not subscribe to {} ({}); its waiters are served by the renewal tick", channel,
                                error.getMessage());
                    }
                });
    }

    /** Only semaphores this JVM has waited on have a subscription: the others need none. */
    @Override
    public boolean isSubscribed(SemaphoreKeys keys) {
        CompletableFuture<Void> subscription = subscriptions.get(channel(keys));
        return !stopped && subscription != null && subscription.isDone() && !subscription.isCompletedExceptionally();
    }

    @Override
    public void forget(SemaphoreKeys keys) {
        String channel = channel(keys);
        if (subscriptions.remove(channel) != null) {
            connection().thenAccept(pubSub -> pubSub.async().sunsubscribe(channel));
        }
    }

    @Override
    public void start() {
        connection().whenComplete((pubSub, error) -> {
            if (error != null) {
                log.warn("Could not connect for sharded pub/sub ({}); retrying on the next wait, waiters are served"
                        + " by the renewal tick meanwhile", error.getMessage());
            }
        });
    }

    /** The pub/sub connection, connecting (without blocking) if there is none or the last try failed. */
    private CompletableFuture<StatefulRedisClusterPubSubConnection<String, String>> connection() {
        lock.lock();
        try {
            if (connection == null || connection.isCompletedExceptionally()) {
                connection = client.connectPubSubAsync(StringCodec.UTF8).thenApply(pubSub -> {
                    pubSub.addListener(new RedisPubSubAdapter<>() {
                        @Override
                        public void smessage(String channel, String message) {
                            dispatch.execute(() -> Inbox.deliver(message, grants));
                        }
                    });
                    return pubSub;
                });
            }
            return connection;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Left to Lettuce: the sharded subscriptions are spread over one connection per node, each
     * reconnected and re-subscribed by itself; the renewal tick serves the waiters meanwhile.
     */
    @Override
    public void reconnect() {
    }

    @Override
    public void stop() {
        lock.lock();
        try {
            stopped = true;
            if (connection != null) {
                connection.thenAccept(StatefulRedisClusterPubSubConnection::closeAsync);
            }
        } finally {
            lock.unlock();
        }
        dispatch.shutdown();
    }
}
