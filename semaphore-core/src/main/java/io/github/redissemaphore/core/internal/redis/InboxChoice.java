package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.Properties;
import java.util.concurrent.Executor;
import java.util.function.ObjLongConsumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.scheduling.TaskScheduler;

/**
 * Which inbox a registry hears its grants in: sharded pub/sub on a Redis Cluster whose nodes run
 * it (Redis 7 or newer), one channel per JVM elsewhere. The nodes' version is read with
 * {@code INFO}. Where the Redis user may not run {@code INFO} (a managed offering's rule), the
 * command sharded pub/sub needs, {@code SPUBLISH}, is tried instead: it works, or the inbox falls
 * back to {@code PUBLISH} on one channel per JVM, which every Redis Cluster runs; one line says
 * which. A cluster that cannot be asked now is taken to run it (Redis 6 is past its end of life).
 */
public final class InboxChoice {

    private static final Logger log = LoggerFactory.getLogger(InboxChoice.class);

    private InboxChoice() {
    }

    /**
     * @param clientId   this JVM's unguessable id, which names its channels
     * @param scheduler  times the retries of a subscription that failed
     * @param subscriber where a retry subscribes (it blocks): not the scheduler
     * @param grants     hears each grant ({@code waiter id, fencing token}) and adoption
     *                   ({@code permit id, -server time µs}) the inbox receives, off Lettuce's I/O threads
     */
    public static Inbox of(RedisConnectionFactory connectionFactory, String keyPrefix, String clientId,
                           TaskScheduler scheduler, Executor subscriber, ObjLongConsumer<String> grants) {
        if (connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware()
                && lettuce.getNativeClient() instanceof RedisClusterClient client
                && runsShardedPubSub(lettuce, SemaphoreKeys.of(keyPrefix, "inbox-check").channel(clientId))) {
            return new ShardedInbox(client, clientId, grants);
        }
        return new JvmInbox(connectionFactory, scheduler, subscriber, SemaphoreKeys.inboxChannel(keyPrefix, clientId),
                grants);
    }

    /**
     * @param channel a sharded channel of this JVM's, on which nobody listens, for the try of {@code SPUBLISH}
     * @return whether every node runs Redis 7 or newer, as {@code INFO} says; without {@code INFO},
     *         whether {@code SPUBLISH} works; true when the cluster cannot be asked now
     */
    @SuppressWarnings("unchecked")
    private static boolean runsShardedPubSub(LettuceConnectionFactory factory, String channel) {
        Duration timeout = factory.getClientConfiguration().getCommandTimeout();
        try (RedisClusterConnection connection = factory.getClusterConnection()) {
            Refusal refusal;
            try {
                return lowestMajorVersion(connection.serverCommands().info("server")) >= 7;
            } catch (RuntimeException e) {
                refusal = Refusal.of(e, null);
                if (refusal == null) {
                    return true;
                }
            }
            try {
                // An empty message: an inbox drops what is not a grant. Lettuce sends it to the channel's node.
                ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection())
                        .spublish(channel.getBytes(StandardCharsets.UTF_8), new byte[0])
                        .toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                log.info("Redis refuses INFO to the semaphores (Redis: \"{}\"), so the version of the cluster's nodes"
                        + " is unknown; SPUBLISH works, so grants go by sharded pub/sub", refusal.reply().strip());
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return true;
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                Refusal spublish = Refusal.of(e, null);
                if (spublish == null) {
                    return true;
                }
                log.info("Redis refuses INFO (Redis: \"{}\") and SPUBLISH (Redis: \"{}\") to the semaphores, so grants"
                        + " go by PUBLISH on one channel per JVM, which the cluster carries to every node",
                        refusal.reply().strip(), spublish.reply().strip());
                return false;
            }
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** @return the lowest major version of the nodes, or 7 when the reply says none */
    private static int lowestMajorVersion(@Nullable Properties info) {
        return info == null ? 7 : info.stringPropertyNames().stream()
                .filter(key -> key.endsWith("redis_version"))
                .mapToInt(key -> Integer.parseInt(info.getProperty(key).split("\\.")[0]))
                .min().orElse(7);
    }
}
