package io.github.redissemaphore.core.internal.redis;

import java.util.function.ObjLongConsumer;

/**
 * Where this JVM hears of its grants: the scripts publish {@code "<waiter id> <fencing token>"}
 * on the channel a waiter named when it joined the queue (direct hand-off, no polling). A message
 * lost on the way only delays its waiter until the next renewal tick, which reports the grant.
 * An adoption tells the lease's former owner {@code "<permit id> -<server time µs>"}.
 */
public interface Inbox {

    /** @return the channel the scripts publish grants of this semaphore's waiters on */
    String channel(SemaphoreKeys keys);

    /** Called before this JVM's waiters join the semaphore's queue: subscribe if not yet done. */
    void listenFor(SemaphoreKeys keys);

    /** @return whether grants for this semaphore's waiters reach this JVM now (no Redis call) */
    boolean isSubscribed(SemaphoreKeys keys);

    /** The registry forgot the semaphore: its channel, if it has one of its own, can go. */
    void forget(SemaphoreKeys keys);

    /** Subscribes what every semaphore shares; if Redis is not there yet, keeps trying. */
    void start();

    /**
     * The library's connection to Redis was made anew (Redis restarted or failed over, or the
     * connection dropped): a subscription whose connection dropped too is made anew at once, not
     * after the client library's reconnect backoff. Returns at once.
     */
    void reconnect();

    /** Unsubscribes and stops delivering. */
    void stop();

    /** Parses one message and passes the grant on; anything malformed is dropped. */
    static void deliver(String message, ObjLongConsumer<String> grants) {
        int space = message.indexOf(' ');
        if (space > 0) {
            try {
                grants.accept(message.substring(0, space), Long.parseLong(message.substring(space + 1)));
            } catch (NumberFormatException e) {
                // not ours: the tick serves the waiter anyway
            }
        }
    }
}
