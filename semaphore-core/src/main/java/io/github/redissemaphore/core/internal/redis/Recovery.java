package io.github.redissemaphore.core.internal.redis;

/**
 * Hears that Redis answers the library's connection ({@link RedisConnections}) again after calls
 * of the library went unanswered; and tells it whether calls wait to be sent again.
 */
public interface Recovery {

    /** No one listens. */
    Recovery NONE = reconnected -> {
    };

    /**
     * @return whether calls wait to be sent again (clean-ups): while they do, a lost
     *         connection is made anew every 200 ms, so they go the moment Redis answers, not
     *         when the next of them is due
     */
    default boolean callsDue() {
        return false;
    }

    /**
     * Redis answered again: a reply came, or a new connection was made. Called off Lettuce's
     * I/O threads.
     *
     * @param reconnected whether the library's connection was made anew: Redis restarted,
     *                    failed over, or the old connection dropped, so the application's other
     *                    connections (a subscription) are likely to be broken too
     */
    void answersAgain(boolean reconnected);
}
