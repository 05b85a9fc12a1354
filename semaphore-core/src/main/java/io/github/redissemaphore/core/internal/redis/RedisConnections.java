package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The library's connection of one registry: made anew at once, and every call sent on it in order.
 *
 * <p><b>The library's connection.</b> Script calls go over one connection of the registry's own,
 * made by the connection factory's Lettuce client (same address, credentials, TLS, database,
 * client options and resources as the application's connections), not over the application's
 * shared connection. So the library decides how that connection comes back, without changing
 * the application's: when it is found closed (Redis stopped, restarted, failed over, or the
 * connection dropped), it is closed for good and a new one is made at once, and again every
 * {@link ConnectionKeeper#RECONNECT_DELAY} while calls wait for it, instead of waiting out
 * Lettuce's reconnect backoff, which grows to 30 s; so is a connection lost while clean-ups wait
 * to be sent again ({@link Recovery#callsDue}). Calls made while there is no open connection wait
 * in line ({@link CallLine}), in order, and are sent the moment one is made; a call whose caller
 * gave up meanwhile is not sent at all (a late acquire must not land after the clean-up of its
 * failure). A factory whose client has no address of its own (static master/replica) lends its
 * dedicated connection instead, the same way.
 *
 * <p><b>Order.</b> One connection carries every script call of the registry, in the order they
 * were made: a release this JVM sent reaches Redis before any call it makes afterwards, whether or
 * not the release's caller waited for the reply.
 *
 * <p><b>Time bound.</b> {@link #timeout()}: the registry's Redis timeout, or the factory's command
 * timeout if that is shorter; the library's connection is given it as its command timeout too
 * ({@link TimeBound}, which bounds each call's reply by it).
 *
 * <p><b>Whether Redis answers.</b> {@link #answering()} is false from a call that went unanswered
 * (timed out, or its connection closed under it) or a connection found closed, until the next
 * reply or connection ({@link AnswerTracker}); {@link Recovery} hears when Redis answers again.
 *
 * <p>Kept, and made anew, by {@link ConnectionKeeper} (made by {@link ConnectionMaker}; Lettuce's
 * own reconnects heard by {@link LettuceReconnects}; a recovery told by {@link RecoveryNotice});
 * one whose server refuses a write with {@code READONLY} dropped, and the master followed, by
 * {@link ReadOnlyFollower}. This class sends the calls, in order, and closes it all.
 * A call that blocks the connection it is sent on ({@code WAIT}) goes on a connection of its own
 * ({@link DedicatedConnections}).
 */
public final class RedisConnections implements AutoCloseable {

    private final LettuceConnectionFactory connectionFactory;
    private final TimeBound bound;
    private final AnswerTracker answers;
    private final LettuceReconnects reconnects;
    /** Drops a connection to a demoted master, and sends its refused calls again; under {@link #lock}. */
    private final ReadOnlyFollower follower;
    /** Keeps the library's connection, and makes it anew; under {@link #lock}. */
    private final ConnectionKeeper keeper;

    /**
     * Guards the state of the {@link #line}, the {@link #keeper} and the {@link #follower}: a call
     * goes out on the connection in order.
     */
    private final ReentrantLock lock = new ReentrantLock();
    /** The calls' places in line, and the calls waiting for a connection, in the order they were made. */
    private final CallLine line;

    /**
     * @param timeout        the longest a call may take (the factory's command timeout is the
     *                       bound if it is shorter)
     * @param connector      where connections are made and closed: not Lettuce's event loop,
     *                       and not a thread whose lateness delays anything else
     * @param inCallersScope wraps a task so that it runs in the caller's observation, wherever it runs
     * @param recovery       hears when Redis answers again
     * @throws IllegalArgumentException unless the factory is Lettuce's
     */
    public RedisConnections(RedisConnectionFactory connectionFactory, Duration timeout, Executor connector,
                            UnaryOperator<Runnable> inCallersScope, Recovery recovery) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalArgumentException("The semaphore needs a LettuceConnectionFactory (Spring Data Redis with"
                    + " Lettuce), but got " + connectionFactory);
        }
        this.connectionFactory = lettuce;
        Duration bounded = TimeBound.of(lettuce, timeout);
        Objects.requireNonNull(connector, "connector");
        this.line = new CallLine(inCallersScope);
        Objects.requireNonNull(recovery, "recovery");
        this.answers = new AnswerTracker(connector, recovery);
        this.bound = new TimeBound(bounded, answers, this::connectFailure);
        this.reconnects = new LettuceReconnects(connector, answers);
        ConnectionMaker maker = new ConnectionMaker(lettuce, bounded, reconnects);
        this.follower = new ReadOnlyFollower(lock, new Current(), line, connector, bounded);
        this.keeper = new ConnectionKeeper(lock, connector, maker, reconnects, answers, recovery, line, follower);
    }

    /** Connections bounded by the factory's command timeout, everything done on {@code executor}: for tests. */
    public RedisConnections(RedisConnectionFactory connectionFactory, Executor executor) {
        this(connectionFactory, Duration.ofDays(1), executor, UnaryOperator.identity(), Recovery.NONE);
    }

    /** @return how long a call may take before it fails */
    public Duration timeout() {
        return bound.timeout();
    }

    /** The factory the connections are made by, for {@link DedicatedConnections}. */
    LettuceConnectionFactory factory() {
        return connectionFactory;
    }

    /** Whether Redis answers, for {@link DedicatedConnections}, which notes the answers of its calls too. */
    AnswerTracker answers() {
        return answers;
    }

    /**
     * @return whether Redis answers now, as far as this JVM can tell without a call: the library's
     *         connection is open, and no call went unanswered since the last reply
     */
    public boolean answering() {
        if (answers.silent()) {
            return false;
        }
        lock.lock();
        try {
            return keeper.free() != null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return System.nanoTime() since which Redis has answered nothing while a call of the library
     *         was out, for a caller whose call is out now: the moment the first call after Redis'
     *         last answer (a reply, or a connection made) was made, or that answer if a call made
     *         before it is still out
     */
    public long unansweredSinceNanos() {
        return answers.unansweredSinceNanos();
    }

    /** Makes the library's connection now, in the background, so the first call need not wait for it. */
    public void connectSoon() {
        lock.lock();
        try {
            keeper.connectIfNeeded();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends {@code command} on the library's connection and completes {@code reply} with its
     * outcome: at once if the connection is open and nothing waits before it, else once a
     * connection is made (unless {@code reply} is done by then).
     */
    <R> void send(CompletableFuture<R> reply,
                  Function<RedisScriptingAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command) {
        answers.callMade();
        lock.lock();
        try {
            if (keeper.closed()) {
                reply.completeExceptionally(CallFailures.closed());
                return;
            }
            long order = line.nextPlace();
            Link open = keeper.free();
            if (open != null) {
                dispatch(open, reply, command, order, true);
                return;
            }
            line.add(line.call(order, reply, target -> dispatch(target, reply, command, order, true)));
            keeper.connectIfNeeded();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends on {@code open}, under the lock. A call that a demoted master refuses ({@code READONLY}:
     * it wrote nothing, as a replica refuses every write) is sent again, once, on the connection
     * made anew, to the master the Sentinel names now ({@link ReadOnlyFollower#demoted}), in its place
     * in line.
     *
     * @param order the call's place in line (calls are sent in the order they were made)
     * @param again whether it is to be sent again if refused with READONLY (it was not yet)
     */
    private <R> void dispatch(Link open, CompletableFuture<R> reply,
                              Function<RedisScriptingAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command,
                              long order, boolean again) {
        CompletableFuture<R> sent;
        open.sending();
        try {
            sent = command.apply(open.commands());
        } catch (RuntimeException e) {
            follower.settled(open);
            reply.completeExceptionally(e);
            return;
        }
        sent.whenComplete((value, error) -> {
            try {
                if (error != null && ReadOnlyRetirement.readOnly(error)) {
                    answers.answered();
                    if (follower.demoted(open, again && !reply.isDone() ? line.call(order, reply,
                            target -> dispatch(target, reply, command, order, false)) : null)) {
                        return;
                    }
                }
                answers.complete(reply, value, error);
            } finally {
                follower.settled(open);
            }
        });
    }

    /**
     * @return {@code reply} failing after {@code limit} ({@link #timeout()}, or longer for a call
     *         that also waits on the server) with
     *         {@link io.github.redissemaphore.core.SemaphoreUnavailableException}, as does any
     *         failure; the value parsed ({@link TimeBound#within})
     */
    <R, T> CompletableFuture<T> within(SemaphoreKeys keys, CompletableFuture<R> reply, Duration limit,
                                       Function<R, T> parse) {
        return bound.within(keys, reply, limit, parse);
    }

    /** @return why the last connect failed, while there is no connection; else null */
    private @Nullable RuntimeException connectFailure() {
        return keeper.connectFailure();
    }

    /** Fails what waits, and closes the library's connection (and one retiring). Idempotent. */
    @Override
    public void close() {
        Link open;
        Link dropped;
        lock.lock();
        try {
            if (keeper.closed()) {
                return;
            }
            open = keeper.close();
            dropped = follower.close();
            reconnects.close();
            line.fail(CallFailures.closed());
        } finally {
            lock.unlock();
        }
        if (open != null) {
            open.close();
        }
        if (dropped != null) {
            dropped.close();
        }
    }

    /** The library's connection as {@link ReadOnlyFollower} sees it; under the lock. */
    private final class Current implements ReadOnlyFollower.Connection {

        @Override
        public boolean closed() {
            return keeper.closed();
        }

        @Override
        public boolean current(Link open) {
            return keeper.current(open);
        }

        @Override
        public void dropCurrent() {
            keeper.dropCurrent();
        }

        @Override
        public void connectIfNeeded() {
            keeper.connectIfNeeded();
        }
    }
}
