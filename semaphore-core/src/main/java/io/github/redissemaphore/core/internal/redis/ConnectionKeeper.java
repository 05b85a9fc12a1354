package io.github.redissemaphore.core.internal.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the library's connection of {@link RedisConnections}: the one open now, and when it is found
 * closed (Redis stopped, restarted, failed over, or the connection dropped), it is closed for good
 * and a new one made at once ({@link ConnectionMaker}), and again every {@link #RECONNECT_DELAY}
 * while calls wait for it or clean-ups wait to be sent again ({@link Recovery#callsDue}), instead of
 * waiting out Lettuce's reconnect backoff, which grows to 30 s. The calls waiting in line
 * ({@link CallLine}) are sent the moment one is made. Its state is guarded by the lock of
 * {@link RedisConnections}, which it is given; connections are made and closed on the connector.
 */
final class ConnectionKeeper {

    /** How soon a connect that failed is tried again while calls wait for a connection. */
    static final Duration RECONNECT_DELAY = Duration.ofMillis(200);

    /** The connection's category, which users configure for what the library's connection does. */
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    /** The lock of {@link RedisConnections}: guards every field below but {@link #closed}. */
    private final ReentrantLock lock;
    /**
     * Where connections are made and closed, and waiting calls sent once one is: never Lettuce's
     * event loop, and never a scheduler whose lateness delays anything else.
     */
    private final Executor connector;
    private final ConnectionMaker maker;
    private final LettuceReconnects reconnects;
    private final AnswerTracker answers;
    private final Recovery recovery;
    private final CallLine line;
    /** Holds the line while a connection dropped for a READONLY has calls out. */
    private final ReadOnlyFollower follower;
    /** Says when a connection made is a recovery, and tells the registry. */
    private final RecoveryNotice notice;

    private @Nullable Link link;
    private boolean connecting;
    private @Nullable RuntimeException lastConnectFailure;
    private volatile boolean closed;

    /**
     * @param lock      the lock of {@link RedisConnections}, which also guards {@code line} and {@code follower}
     * @param connector where connections are made and closed: not Lettuce's event loop, and not a
     *                  thread whose lateness delays anything else
     */
    ConnectionKeeper(ReentrantLock lock, Executor connector, ConnectionMaker maker, LettuceReconnects reconnects,
                     AnswerTracker answers, Recovery recovery, CallLine line, ReadOnlyFollower follower) {
        this.lock = lock;
        this.connector = connector;
        this.maker = maker;
        this.reconnects = reconnects;
        this.answers = answers;
        this.recovery = recovery;
        this.line = line;
        this.follower = follower;
        this.notice = new RecoveryNotice(answers);
    }

    /** @return whether the registry closed; read off the lock too */
    boolean closed() {
        return closed;
    }

    /**
     * Under the lock.
     *
     * @return the library's connection if it is open and nothing waits to go out before a call made
     *         now (no call in line, no connection dropped for a READONLY with calls out); else null
     */
    @Nullable Link free() {
        Link open = link;
        return open != null && open.isOpen() && line.isEmpty() && !follower.busy() ? open : null;
    }

    /**
     * Under the lock.
     *
     * @return whether {@code open} is the library's connection now
     */
    boolean current(Link open) {
        return link == open;
    }

    /** Under the lock: the library's connection is dropped; there is none until one is made anew. */
    void dropCurrent() {
        link = null;
        reconnects.follow(null);
    }

    /** Under the lock: starts making a connection unless one is being made. */
    void connectIfNeeded() {
        if (connecting || closed) {
            return;
        }
        connecting = true;
        try {
            connector.execute(this::connect);
        } catch (RejectedExecutionException e) {
            connecting = false;
            line.fail(CallFailures.closed());
        }
    }

    /**
     * On the connector: uses the library's connection if it is open (again), else closes it (its
     * own reconnects would wait out Lettuce's backoff) and makes a new one; sends what waits.
     */
    private void connect() {
        Link stale;
        lock.lock();
        try {
            stale = link;
            if (stale != null && stale.isOpen()) {
                connecting = false;
                if (!follower.busy()) {
                    line.drain(stale);
                }
                return;
            }
            link = null;
            reconnects.follow(null);
        } finally {
            lock.unlock();
        }
        if (stale != null) {
            log.warn("The connection of the semaphores to Redis closed; connecting again now and every {} ms while"
                    + " calls wait for it", RECONNECT_DELAY.toMillis());
            stale.close();
        }
        Link fresh = null;
        RuntimeException failure = null;
        try {
            fresh = maker.open();
        } catch (RuntimeException e) {
            failure = e;
        }
        boolean recovered;
        lock.lock();
        try {
            connecting = false;
            if (closed) {
                if (fresh != null) {
                    fresh.close();
                }
                return;
            }
            if (fresh == null) {
                lastConnectFailure = failure;
                notice.connectFailed();
                line.dropGivenUp();
                if (!line.isEmpty() || recovery.callsDue()) {
                    retryConnect();
                }
                return;
            }
            link = fresh;
            reconnects.follow(fresh.connection());
            answers.connected();
            lastConnectFailure = null;
            recovered = notice.connected();
            if (!follower.busy()) {
                // (Else the calls still out on the connection dropped for a READONLY come back
                // first, to go back in line: the last of them sends the line, retired.)
                line.drain(fresh);
            }
        } finally {
            lock.unlock();
        }
        if (recovered) {
            notice.tell();
        }
    }

    /** Under the lock: tries to connect again in {@link #RECONNECT_DELAY}. */
    private void retryConnect() {
        connecting = true;
        Executor later = CompletableFuture.delayedExecutor(RECONNECT_DELAY.toMillis(), TimeUnit.MILLISECONDS,
                connector);
        try {
            later.execute(this::connect);
        } catch (RejectedExecutionException e) {
            connecting = false;
            line.fail(CallFailures.closed());
        }
    }

    /** @return why the last connect failed, while there is no connection; else null */
    @Nullable RuntimeException connectFailure() {
        lock.lock();
        try {
            return link == null ? lastConnectFailure : null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: no connection is made from now on.
     *
     * @return the library's connection, no longer it, for the registry to close; or null
     */
    @Nullable Link close() {
        closed = true;
        Link open = link;
        link = null;
        return open;
    }
}
