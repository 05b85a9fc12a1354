package io.github.redissemaphore.core.internal;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.ObjLongConsumer;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.util.backoff.FixedBackOff;

/**
 * This JVM's one pub/sub channel, on which the scripts hand grants straight to it as
 * {@code "<waiter id> <fencing token>"}. Spring's listener container keeps the subscription
 * alive across reconnects; a message lost meanwhile only delays its waiter until the next tick.
 */
final class Inbox {

    private final RedisMessageListenerContainer container = new RedisMessageListenerContainer();
    /** One ordered thread, so a slow callback of a completed future never stalls Redis I/O. */
    private final ExecutorService dispatch = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "semaphore-inbox");
        thread.setDaemon(true);
        return thread;
    });

    Inbox(RedisConnectionFactory connectionFactory, String channel, ObjLongConsumer<String> grants) {
        container.setConnectionFactory(connectionFactory);
        container.setTaskExecutor(dispatch);
        container.setRecoveryBackoff(new FixedBackOff(1000));
        container.setBeanName("semaphore-inbox-" + channel);
        container.addMessageListener((Message message, byte[] pattern) -> {
            String body = new String(message.getBody(), StandardCharsets.UTF_8);
            int space = body.indexOf(' ');
            if (space > 0) {
                grants.accept(body.substring(0, space), Long.parseLong(body.substring(space + 1)));
            }
        }, new ChannelTopic(channel));
        container.afterPropertiesSet();
    }

    /** Subscribes, waiting (bounded) for Redis to confirm, so no grant is published before it listens. */
    void start() {
        container.start();
    }

    void stop() {
        try {
            container.destroy();
        } catch (Exception e) {
            // closing anyway: the subscription dies with its connection
        } finally {
            dispatch.shutdown();
        }
    }
}
