package io.github.redissemaphore.core.internal.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * Follows the master when the server of the library's connection ({@link RedisConnections}) turns
 * out demoted ({@code READONLY}): the connection is dropped and a new one made at once, the calls
 * it refused go back in line where they were made, and the dropped one retires
 * ({@link ReadOnlyRetirement}) until its calls are back or one call's time passed. Logged by
 * {@link ReadOnlyWarnings}. Runs under the lock of {@link RedisConnections}, which it is given.
 */
final class ReadOnlyFollower {

    /** The library's connection as the follower sees it: every method is called under its lock. */
    interface Connection {

        /** @return whether the registry closed */
        boolean closed();

        /** @return whether {@code open} is the library's connection now */
        boolean current(Link open);

        /** The library's connection is dropped: there is none until one is made anew. */
        void dropCurrent();

        /** Starts making a connection unless one is being made. */
        void connectIfNeeded();
    }

    /** The lock of {@link RedisConnections}: a call goes out on the connection in order. */
    private final ReentrantLock lock;
    private final Connection connection;
    private final CallLine line;
    /** Where a connection retiring is timed out: not Lettuce's event loop. */
    private final Executor connector;
    /** How long a call may take: a connection retiring closes after it, however its server answers. */
    private final Duration timeout;
    private final ReadOnlyWarnings readOnlyWarnings = new ReadOnlyWarnings();
    /** The connection dropped for a READONLY, kept until its calls are back; guarded by {@link #lock}. */
    private final ReadOnlyRetirement retirement;

    /**
     * @param lock      the lock of {@link RedisConnections}, which guards {@code connection} and {@code line}
     * @param connector where connections are closed: not Lettuce's event loop
     * @param timeout   how long a call may take
     */
    ReadOnlyFollower(ReentrantLock lock, Connection connection, CallLine line, Executor connector,
                     Duration timeout) {
        this.lock = lock;
        this.connection = connection;
        this.line = line;
        this.connector = connector;
        this.timeout = timeout;
        this.retirement = new ReadOnlyRetirement(connector);
    }

    /**
     * Under the lock.
     *
     * @return whether a connection dropped for a READONLY still has calls out: nothing goes out before they are back
     */
    boolean busy() {
        return retirement.busy();
    }

    /**
     * The server of {@code open} refused a write as a replica: a failover demoted it (a Sentinel's
     * {@code SENTINEL FAILOVER}, or the old master coming back as a replica), and this connection
     * would go on talking to it. So it is dropped now and a new one made at once, which Lettuce
     * makes to the master the Sentinel names, without waiting for a lease to run out or for
     * Lettuce's reconnect backoff. {@code requeue} (a call refused for the first time on a dropped
     * connection) goes back in line where it was made; the calls still out on the dropped connection
     * come back first (refused too, as it is a replica; it retires, {@link ReadOnlyRetirement}), then
     * the line goes out on the new one, in order. At most one connection is dropped per
     * {@link ReadOnlyRetirement#READ_ONLY_RECONNECT_SPACING}: within it, a call the connection made
     * anew refuses fails (the same read-only server again). Logged by {@link ReadOnlyWarnings}.
     * Not under the lock.
     *
     * @return whether {@code requeue} was put back in line
     */
    boolean demoted(Link open, @Nullable WaitingCall requeue) {
        boolean drop;
        boolean requeued;
        lock.lock();
        try {
            if (connection.closed()) {
                return false;
            }
            drop = connection.current(open) && retirement.mayDrop();
            if (drop) {
                connection.dropCurrent();
                retirement.retire(open);
                retireWithin(open);
            }
            requeued = requeue != null && open.retired();
            if (requeue != null && requeued) {
                line.add(requeue);
            }
            if (drop || requeued) {
                connection.connectIfNeeded();
            }
        } finally {
            lock.unlock();
        }
        if (drop) {
            readOnlyWarnings.dropped();
        }
        return requeued;
    }

    /**
     * A call sent on {@code open} is back (or was never sent); not under the lock. The last one back
     * on a connection dropped for a READONLY closes it, and lets the calls in line go out.
     */
    void settled(Link open) {
        if (open.settled()) {
            lock.lock();
            try {
                lineFreeIf(retirement.retired(open, false));
            } finally {
                lock.unlock();
            }
        }
    }

    /** Under the lock: however its server answers, {@code open}, retiring, closes after a call's time. */
    private void retireWithin(Link open) {
        try {
            CompletableFuture.delayedExecutor(timeout.toNanos(), TimeUnit.NANOSECONDS, connector)
                    .execute(() -> {
                        lock.lock();
                        try {
                            lineFreeIf(retirement.retired(open, true));
                        } finally {
                            lock.unlock();
                        }
                    });
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /** Under the lock: when the connection dropped for a READONLY closed, what waits goes out, on a connection. */
    private void lineFreeIf(boolean closedRetiring) {
        if (closedRetiring && !line.isEmpty()) {
            connection.connectIfNeeded();
        }
    }

    /**
     * Under the lock.
     *
     * @return the connection retiring, no longer retiring, for the registry to close; or null
     */
    @Nullable Link close() {
        return retirement.close();
    }
}
