package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.RedisCommandExecutionException;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.jspecify.annotations.Nullable;

/**
 * The library's connection dropped for a {@code READONLY} ({@link RedisConnections}), retiring:
 * kept open until the calls still out on it are back (each refused call goes back in line, where
 * it was made; closing it would fail them instead) or one Redis timeout passed, and nothing is sent
 * on the new connection until then. At most one connection is dropped per
 * {@link #READ_ONLY_RECONNECT_SPACING}. Every method runs under the lock of {@link RedisConnections},
 * which asks and is told: this class calls nothing back (it answers whether the line is free, and
 * {@link ReadOnlyFollower} has it sent, and times the retiring connection out).
 */
final class ReadOnlyRetirement {

    /**
     * At most one connection dropped for a {@code READONLY} per this period: when the connection
     * made anew reaches a read-only server again (the address names a replica, or the Sentinel does
     * not name the new master yet), the calls it refuses fail at once instead of each making a new
     * connection (whose recovery would renew every semaphore, be refused, and connect again: a loop
     * bounded by nothing but the connect time).
     */
    static final Duration READ_ONLY_RECONNECT_SPACING = Duration.ofSeconds(1);

    /** No such moment: a System.nanoTime() that never occurs in practice. */
    private static final long NONE = AnswerTracker.NONE;

    /** Where the retired connection is closed. */
    private final Executor connector;
    /**
     * The connection dropped for a {@code READONLY} while calls sent on it are still out: until they
     * are back (each refused call goes back in line, where it was made), nothing is sent on a new
     * connection, and it is closed only then (closing it would fail them instead).
     */
    private @Nullable Link retiring;
    /** System.nanoTime() of the last connection dropped for a READONLY, or NONE. */
    private long lastDropNanos = NONE;

    /** @param connector where the connection is closed: not Lettuce's event loop */
    ReadOnlyRetirement(Executor connector) {
        this.connector = connector;
    }

    /**
     * @return whether Redis refused a call as a replica does a write ({@code READONLY You can't
     *         write against a read only replica}): the server is no master (any more)
     */
    static boolean readOnly(Throwable error) {
        Throwable cause = CallFailures.cause(error);
        String message = cause instanceof RedisCommandExecutionException ? cause.getMessage() : null;
        // Redis 7 replies READONLY to a script's write; Redis 6.2 wraps it: "ERR Error running script
        // (...): @user_script:188: -READONLY You can't write against a read only replica."
        return message != null && (message.startsWith("READONLY") || message.contains(" READONLY ")
                || message.contains("-READONLY "));
    }

    /** @return whether a connection dropped for a READONLY still has calls out: nothing goes out before they are back */
    boolean busy() {
        return retiring != null;
    }

    /**
     * @return whether a connection may be dropped for a READONLY now: none was within
     *         {@link #READ_ONLY_RECONNECT_SPACING} (else the call refused fails, the same read-only
     *         server reached again)
     */
    boolean mayDrop() {
        return lastDropNanos == NONE || System.nanoTime() - lastDropNanos >= READ_ONLY_RECONNECT_SPACING.toNanos();
    }

    /**
     * {@code open} was dropped for a READONLY (it is no longer the library's connection): it retires,
     * closed once the calls still out on it are back ({@link #retired}), or after the Redis timeout
     * however its server answers ({@link ReadOnlyFollower} times it). One retiring before it
     * (dropped a second ago or more) is closed now.
     */
    void retire(Link open) {
        lastDropNanos = System.nanoTime();
        open.retire();
        Link before = retiring;
        if (before != null) {
            // Dropped a second ago or more, and calls are still out on it: its server does not
            // answer them, and they fail as it closes, as they would when they time out. (The line
            // is not free: {@code open} retires now; the caller makes a connection for it.)
            retired(before, true);
        }
        retiring = open;
    }

    /**
     * If {@code open} is the connection retiring and every call sent on it is back (or {@code force}:
     * the calls still out on it have had the time a call may take), closes it (on the connector).
     * {@link Link#settled} checks after its decrement, and {@link #retire} marks it while the call
     * that dropped it is still counted, so the last call back finds the count at 0 and the mark set.
     *
     * @return whether it closed: what waits may go out, on the connection made meanwhile or a new one
     */
    boolean retired(Link open, boolean force) {
        if (retiring != open || (!force && !open.idle())) {
            return false;
        }
        retiring = null;
        try {
            connector.execute(open::close);
        } catch (RejectedExecutionException e) {
            open.close();
        }
        return true;
    }

    /** @return the connection retiring, no longer retiring, for the registry to close; or null */
    @Nullable Link close() {
        Link open = retiring;
        retiring = null;
        return open;
    }
}
