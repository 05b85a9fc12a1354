package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.RedisCommandExecutionException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether Redis answers the library, as far as this JVM can tell without a call: silent from a
 * call that went unanswered (timed out, or its connection closed under it) until the next reply
 * or connection; and since when nothing was answered while a call was out
 * ({@link #unansweredSinceNanos()}). Tells the {@link Recovery} when Redis
 * answers again.
 */
final class AnswerTracker {

    /** No such moment: a System.nanoTime() that never occurs in practice. */
    static final long NONE = Long.MIN_VALUE;

    /** The connection's category, which users configure for what the library's connection does. */
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    /** Where the recovery hears that Redis answers again: off Lettuce's I/O threads. */
    private final Executor connector;
    private final Recovery recovery;
    /** Set by a call Redis did not answer, cleared by a reply: Redis is not answering now. */
    private final AtomicBoolean silent = new AtomicBoolean();
    /** System.nanoTime() of the last reply, or of the last connection made. */
    private volatile long lastAnswerNanos = System.nanoTime();
    /** System.nanoTime() at which the first call since the last answer was made; {@link #NONE} if none was. */
    private final AtomicLong firstUnansweredNanos = new AtomicLong(NONE);

    AnswerTracker(Executor connector, Recovery recovery) {
        this.connector = connector;
        this.recovery = recovery;
    }

    /** @return whether a call went unanswered since the last reply or connection */
    boolean silent() {
        return silent.get();
    }

    /** A call is sent (or waits for a connection): from now on, it waits for an answer. */
    void callMade() {
        firstUnansweredNanos.compareAndSet(NONE, System.nanoTime());
    }

    /**
     * @return System.nanoTime() since which Redis has answered nothing while a call of the library
     *         was out, for a caller whose call is out now: the moment the first call after Redis'
     *         last answer (a reply, or a connection made) was made, or that answer if a call made
     *         before it is still out
     */
    long unansweredSinceNanos() {
        long first = firstUnansweredNanos.get();
        long last = lastAnswerNanos;
        return first == NONE ? last : Math.max(first, last);
    }

    /** Completes {@code reply}, noting whether Redis answered. */
    <V> void complete(CompletableFuture<V> reply, @Nullable V value, @Nullable Throwable error) {
        if (error == null || CallFailures.cause(error) instanceof RedisCommandExecutionException) {
            answered();
        } else {
            unanswered();
        }
        if (error != null) {
            reply.completeExceptionally(error);
        } else {
            reply.complete(value);
        }
    }

    /** Redis replied (with a value or an error reply): it answers. */
    void answered() {
        lastAnswerNanos = System.nanoTime();
        firstUnansweredNanos.set(NONE);
        if (silent.compareAndSet(true, false)) {
            log.debug("Redis answers the semaphores again");
            try {
                connector.execute(() -> recovery.answersAgain(false));
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    }

    /** A call went unanswered: timed out, or its connection closed under it. */
    void unanswered() {
        silent.set(true);
    }

    /** A connection was made: as good as a reply for {@link #unansweredSinceNanos()}. */
    void connected() {
        lastAnswerNanos = System.nanoTime();
        firstUnansweredNanos.set(NONE);
    }

    /**
     * The library's connection was made anew (maybe to another server): Redis answers, and the
     * recovery hears it on the caller's thread, which must not be Lettuce's.
     */
    void reconnected() {
        silent.set(false);
        recovery.answersAgain(true);
    }
}
