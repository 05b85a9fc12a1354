package io.github.redissemaphore.core.internal.redis;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a connection {@link ConnectionKeeper} made is a recovery (a connection was made before,
 * or a connect failed), and the notice of it: logged, and told to the registry, which hears that
 * Redis answers again on a connection made anew ({@link AnswerTracker#reconnected()}). Its state is
 * guarded by the lock of {@link RedisConnections}; the notice is given off it.
 */
final class RecoveryNotice {

    /** The connection's category, which users configure for what the library's connection does. */
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    private final AnswerTracker answers;
    /** A connection was made before, or a connect failed: the next one made is a recovery. */
    private boolean lostOnce;

    RecoveryNotice(AnswerTracker answers) {
        this.answers = answers;
    }

    /** Under the lock: a connect failed, so the next connection made is a recovery. */
    void connectFailed() {
        lostOnce = true;
    }

    /**
     * Under the lock: a connection was made.
     *
     * @return whether it is a recovery, to be told ({@link #tell()}) off the lock
     */
    boolean connected() {
        boolean recovered = lostOnce;
        lostOnce = true;
        return recovered;
    }

    /** Off the lock, on the connector (not Lettuce's thread): the semaphores are connected to Redis again. */
    void tell() {
        log.info("The semaphores are connected to Redis again");
        answers.reconnected();
    }
}
