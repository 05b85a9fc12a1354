package io.github.redissemaphore.core.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.ObjLongConsumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The inbox of a JVM on a standalone Redis, Sentinel, or a Redis 6 cluster: one pub/sub channel
 * per JVM ({@code <prefix>:inbox:<client id>}), to which the scripts {@code PUBLISH}. Spring's
 * listener container keeps the subscription alive across reconnects; a message lost meanwhile
 * only delays its waiter until the next tick.
 */
final class JvmInbox implements Inbox {

    private static final Logger log = LoggerFactory.getLogger(JvmInbox.class);
    private static final Duration RETRY = Duration.ofSeconds(1);

    private final RedisMessageListenerContainer container = new QuietOnRefusal();
    /** Only times the retries: a subscription blocks (up to the container's wait), so it never runs here. */
    private final TaskScheduler scheduler;
    /** Where a retry subscribes: the registry's callback pool, whose threads nothing else waits for. */
    private final Executor subscriber;
    private final String channel;
    /** One ordered thread, so a slow callback of a completed future never stalls Redis I/O. */
    private final ExecutorService dispatch = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "semaphore-inbox");
        thread.setDaemon(true);
        return thread;
    });
    private volatile boolean stopped;

    JvmInbox(RedisConnectionFactory connectionFactory, TaskScheduler scheduler, Executor subscriber, String channel,
             ObjLongConsumer<String> grants) {
        this.scheduler = scheduler;
        this.subscriber = subscriber;
        this.channel = channel;
        container.setConnectionFactory(connectionFactory);
        container.setTaskExecutor(dispatch);
        // the two-argument constructor: Spring Framework 6.2 (Boot 3.5) has no FixedBackOff(long)
        container.setRecoveryBackoff(new FixedBackOff(RETRY.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS));
        container.setBeanName("semaphore-inbox");
        container.addMessageListener((Message message, byte @Nullable [] pattern) ->
                Inbox.deliver(new String(message.getBody(), StandardCharsets.UTF_8), grants), new ChannelTopic(channel));
        container.afterPropertiesSet();
    }

    @Override
    public String channel(SemaphoreKeys keys) {
        return channel;
    }

    @Override
    public void listenFor(SemaphoreKeys keys) {
        // subscribed once for all semaphores
    }

    @Override
    public boolean isSubscribed(SemaphoreKeys keys) {
        return !stopped && container.isListening();
    }

    @Override
    public void forget(SemaphoreKeys keys) {
        // the one channel stays
    }

    /**
     * Subscribes, waiting (bounded) for Redis to confirm, so no grant is published before it
     * listens. If Redis is not there yet, the application still starts: subscribing is retried
     * every second, and waiters are served by the renewal tick meanwhile.
     */
    @Override
    public void start() {
        try {
            container.start();
        } catch (RuntimeException e) {
            Refusal refusal = Refusal.of(e, null);
            if (refusal != null) {
                log.warn("Redis refuses this JVM its inbox channel {} (Redis: \"{}\"): while the scripts may not"
                        + " publish to it, its waiters hear of their grants only at their renewal tick. Give the"
                        + " Redis user &{}:*, as in the ACL rule of {}. Subscribing again every {} s", channel,
                        refusal.reply().strip(), channel.substring(0, channel.lastIndexOf(":inbox:")), Refusal.ACL_DOCS,
                        RETRY.toSeconds());
            } else {
                log.warn("Could not subscribe to {} ({}); retrying every {} s, waiters are served by the renewal tick"
                        + " meanwhile", channel, e.getMessage(), RETRY.toSeconds());
            }
            retryLater();
        }
    }

    /**
     * Subscribes again in {@link #RETRY}: timed by the scheduler, done on the subscriber. While
     * Redis cannot be reached a try blocks for seconds (connect, then the container's wait for the
     * subscription), which on the scheduler would hold up the deadlines and renewals of every
     * semaphore it times.
     */
    private void retryLater() {
        container.stop();
        if (!stopped) {
            try {
                scheduler.schedule(() -> {
                    try {
                        subscriber.execute(this::retry);
                    } catch (RejectedExecutionException e) {
                        // the registry is closing
                    }
                }, Instant.now().plus(RETRY));
            } catch (RejectedExecutionException e) {
                // the registry is closing
            }
        }
    }

    private void retry() {
        if (stopped) {
            return;
        }
        try {
            container.start();
            log.info("Subscribed to {}", channel);
        } catch (RuntimeException e) {
            retryLater();
        }
    }

    /**
     * Subscribes anew, on the subscriber, with a connection made now: the container's subscription
     * would otherwise come back only when its connection's own reconnect backoff lets it (up to
     * 30 s). Grants published in between reach their waiters with the next tick.
     */
    @Override
    public void reconnect() {
        if (stopped) {
            return;
        }
        try {
            subscriber.execute(() -> {
                if (stopped) {
                    return;
                }
                container.stop();
                retry();
            });
        } catch (RejectedExecutionException e) {
            // the registry is closing
        }
    }

    /**
     * Spring's listener container, but a subscription Redis refuses (an ACL without the channel,
     * an error reply) fails its start without a word: the container would log an ERROR with a
     * stack trace at each try, about every second, while {@link #start} says it once at WARN and
     * {@link #retry} tries again quietly. A lost connection keeps the container's own recovery.
     */
    private static final class QuietOnRefusal extends RedisMessageListenerContainer {

        @Override
        protected void handleSubscriptionException(CompletableFuture<Void> future, BackOffExecution backOff,
                                                   Throwable cause) {
            if (Refusal.of(cause, null) != null) {
                future.completeExceptionally(cause);
                return;
            }
            super.handleSubscriptionException(future, backOff, cause);
        }
    }

    @Override
    public void stop() {
        stopped = true;
        try {
            container.destroy();
        } catch (Exception e) {
            // closing anyway: the subscription dies with its connection
        } finally {
            dispatch.shutdown();
        }
    }
}
