package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The connections of one registry, and how long a call may take on them.
 *
 * <p><b>The library's connection.</b> Script calls go over one connection of the registry's own,
 * made by the connection factory's Lettuce client (same address, credentials, TLS, database,
 * client options and resources as the application's connections), not over the application's
 * shared connection. So the library decides how that connection comes back, without changing
 * the application's: when it is found closed (Redis stopped, restarted, failed over, or the
 * connection dropped), it is closed for good and a new one is made at once, and again every
 * {@link #RECONNECT_DELAY} while calls wait for it, instead of waiting out Lettuce's reconnect
 * backoff, which grows to 30 s; so is a connection lost while clean-ups wait to be sent again
 * ({@link Recovery#callsDue}). Calls made while there is no open connection wait here, in order,
 * and are sent the moment one is made; a call whose caller gave up meanwhile is not sent at all
 * (a late acquire must not land after the clean-up of its failure). A factory whose client has no
 * address of its own (static master/replica) lends its dedicated connection instead, the same way.
 *
 * <p><b>Order.</b> One connection carries every script call of the registry, in the order they
 * were made: a release this JVM sent reaches Redis before any call it makes afterwards, whether or
 * not the release's caller waited for the reply.
 *
 * <p><b>Time bound.</b> {@link #timeout()}: the registry's Redis timeout, or the factory's command
 * timeout if that is shorter; the library's connection is given it as its command timeout too.
 *
 * <p><b>Whether Redis answers.</b> {@link #answering()} is false from a call that went unanswered
 * (timed out, or its connection closed under it) or a connection found closed, until the next
 * reply or connection; {@link Recovery} hears when Redis answers again.
 *
 * <p>A call that blocks the connection it is sent on ({@code WAIT}) goes on a connection of its
 * own, from the factory ({@link #sendDedicated}).
 */
public final class RedisConnections implements AutoCloseable {

    /** No such moment: a System.nanoTime() that never occurs in practice. */
    private static final long NONE = Long.MIN_VALUE;

    /** At most one WARN of a demoted master per this period (a misconfigured address would repeat it). */
    private static final Duration READ_ONLY_WARN_PERIOD = Duration.ofSeconds(30);

    /**
     * At most one connection dropped for a {@code READONLY} per this period: when the connection
     * made anew reaches a read-only server again (the address names a replica, or the Sentinel does
     * not name the new master yet), the calls it refuses fail at once instead of each making a new
     * connection (whose recovery would renew every semaphore, be refused, and connect again: a loop
     * bounded by nothing but the connect time).
     */
    static final Duration READ_ONLY_RECONNECT_SPACING = Duration.ofSeconds(1);

    /** How soon a connect that failed is tried again while calls wait for a connection. */
    static final Duration RECONNECT_DELAY = Duration.ofMillis(200);

    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);

    /** Hears that Redis answers again after calls of the library went unanswered. */
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

    private final LettuceConnectionFactory connectionFactory;
    private final Duration timeout;
    /** The factory's command timeout: Lettuce's bound on a connection lent by the factory. */
    private final Duration factoryTimeout;
    /**
     * Where connections are made and closed, and waiting calls sent once one is: never Lettuce's
     * event loop, and never a scheduler whose lateness delays anything else.
     */
    private final Executor connector;
    /** Where a connection of its own ({@link #sendDedicated}) is lent, in the caller's observation. */
    private final Executor lender;
    /** Wraps a call that waits for a connection so it is sent in the caller's observation. */
    private final UnaryOperator<Runnable> inCallersScope;
    private final Recovery recovery;

    /** Guards every field below but {@link #silent}: a call goes out on the connection in order. */
    private final ReentrantLock lock = new ReentrantLock();
    private @Nullable Link link;
    /**
     * The connection dropped for a {@code READONLY} while calls sent on it are still out: until they
     * are back (each refused call goes back in line, where it was made), nothing is sent on a new
     * connection, and it is closed only then (closing it would fail them instead).
     */
    private @Nullable Link retiring;
    /** The order of the calls made: a call refused with READONLY goes back in line where it was. */
    private long made;
    /** System.nanoTime() of the last connection dropped for a READONLY, or NONE. */
    private long lastReadOnlyDropNanos = NONE;
    /** Calls made while no connection was open (or sent again), in the order they were made. */
    private final PriorityQueue<Waiting> waiting = new PriorityQueue<>(
            (x, y) -> Long.compare(x.order, y.order));
    private boolean connecting;
    /** A connection was made before, or a connect failed: the next one made is a recovery. */
    private boolean lostOnce;
    private @Nullable RuntimeException lastConnectFailure;
    /** The client cannot connect by itself (no address of its own): lend the factory's dedicated connection. */
    private boolean lendFromFactory;
    private volatile boolean closed;
    /** Set by a call Redis did not answer, cleared by a reply: Redis is not answering now. */
    private final AtomicBoolean silent = new AtomicBoolean();
    /** The connection of {@link #link}, for Lettuce's reconnect events (read off the lock). */
    private volatile @Nullable StatefulConnection<byte[], byte[]> current;
    /** The client {@link #reconnects} listens to, or null. */
    private @Nullable AbstractRedisClient listened;
    /**
     * Hears Lettuce make the library's connection anew by itself (its own reconnect, which on a
     * Sentinel setup asks the Sentinel for the master again): to the registry, that is a new
     * connection as one made here is, maybe to another server ({@link Recovery#answersAgain}).
     */
    private final RedisConnectionStateListener reconnects = new RedisConnectionStateListener() {
        @Override
        public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
            if (connection != current || closed) {
                return;
            }
            try {
                connector.execute(() -> {
                    log.info("The semaphores' connection to Redis was made anew ({})", address);
                    silent.set(false);
                    recovery.answersAgain(true);
                });
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    };
    /** System.nanoTime() of the last WARN of a demoted master, or NONE. */
    private volatile long lastReadOnlyWarnNanos = NONE;
    /** System.nanoTime() of the last reply, or of the last connection made. */
    private volatile long lastAnswerNanos = System.nanoTime();
    /** System.nanoTime() at which the first call since the last answer was made; {@link #NONE} if none was. */
    private final AtomicLong firstUnansweredNanos = new AtomicLong(NONE);

    /**
     * @param timeout        the longest a call may take (the factory's command timeout is the
     *                       bound if it is shorter)
     * @param connector      where connections are made and closed: not Lettuce's event loop,
     *                       and not a thread whose lateness delays anything else
     * @param lender         where a connection of its own is lent for a call, in the caller's observation
     * @param inCallersScope wraps a task so that it runs in the caller's observation, wherever it runs
     * @param recovery       hears when Redis answers again
     * @throws IllegalArgumentException unless the factory is Lettuce's
     */
    public RedisConnections(RedisConnectionFactory connectionFactory, Duration timeout, Executor connector,
                            Executor lender, UnaryOperator<Runnable> inCallersScope, Recovery recovery) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalArgumentException("The semaphore needs a LettuceConnectionFactory (Spring Data Redis with"
                    + " Lettuce), but got " + connectionFactory);
        }
        this.connectionFactory = lettuce;
        this.factoryTimeout = lettuce.getClientConfiguration().getCommandTimeout();
        this.timeout = factoryTimeout.compareTo(timeout) < 0 ? factoryTimeout : timeout;
        this.connector = Objects.requireNonNull(connector, "connector");
        this.lender = Objects.requireNonNull(lender, "lender");
        this.inCallersScope = Objects.requireNonNull(inCallersScope, "inCallersScope");
        this.recovery = Objects.requireNonNull(recovery, "recovery");
    }

    /** Connections bounded by the factory's command timeout, everything done on {@code executor}: for tests. */
    public RedisConnections(RedisConnectionFactory connectionFactory, Executor executor) {
        this(connectionFactory, Duration.ofDays(1), executor, executor, UnaryOperator.identity(), Recovery.NONE);
    }

    /** @return how long a call may take before it fails */
    public Duration timeout() {
        return timeout;
    }

    /**
     * @return how long Lettuce lets a command run on a connection of its own ({@link #sendDedicated}):
     *         the factory's command timeout, as such a connection is the factory's
     */
    Duration dedicatedTimeout() {
        return factoryTimeout;
    }

    /**
     * @return whether Redis answers now, as far as this JVM can tell without a call: the library's
     *         connection is open, and no call went unanswered since the last reply
     */
    public boolean answering() {
        if (silent.get()) {
            return false;
        }
        lock.lock();
        try {
            return link != null && link.isOpen() && waiting.isEmpty() && retiring == null;
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
        long first = firstUnansweredNanos.get();
        long last = lastAnswerNanos;
        return first == NONE ? last : Math.max(first, last);
    }

    /** Makes the library's connection now, in the background, so the first call need not wait for it. */
    public void connectSoon() {
        lock.lock();
        try {
            connectIfNeeded();
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
        firstUnansweredNanos.compareAndSet(NONE, System.nanoTime());
        lock.lock();
        try {
            if (closed) {
                reply.completeExceptionally(closed());
                return;
            }
            long order = made++;
            Link open = link;
            if (open != null && open.isOpen() && waiting.isEmpty() && retiring == null) {
                dispatch(open, reply, command, order, true);
                return;
            }
            waiting.add(new Waiting(order, reply, inCallersScope,
                    target -> dispatch(target, reply, command, order, true)));
            connectIfNeeded();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends on {@code open}, under the lock. A call that a demoted master refuses ({@code READONLY}:
     * it wrote nothing, as a replica refuses every write) is sent again, once, on the connection
     * made anew, to the master the Sentinel names now ({@link #demoted}), in its place in line.
     *
     * @param order the call's place in line (calls are sent in the order they were made)
     * @param again whether it is to be sent again if refused with READONLY (it was not yet)
     */
    private <R> void dispatch(Link open, CompletableFuture<R> reply,
                              Function<RedisScriptingAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command,
                              long order, boolean again) {
        CompletableFuture<R> sent;
        open.inFlight.incrementAndGet();
        try {
            sent = command.apply(open.commands());
        } catch (RuntimeException e) {
            settled(open);
            reply.completeExceptionally(e);
            return;
        }
        sent.whenComplete((value, error) -> {
            try {
                if (error != null && readOnly(error)) {
                    answered();
                    if (demoted(open, again && !reply.isDone() ? new Waiting(order, reply, inCallersScope,
                            target -> dispatch(target, reply, command, order, false)) : null)) {
                        return;
                    }
                }
                complete(reply, value, error);
            } finally {
                settled(open);
            }
        });
    }

    /**
     * A call sent on {@code open} is back (or was never sent). The last one back on a connection
     * dropped for a READONLY closes it, and lets the calls in line go out on the new connection.
     */
    private void settled(Link open) {
        if (open.inFlight.decrementAndGet() == 0 && open.retired) {
            lock.lock();
            try {
                retired(open, false);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Under the lock: if {@code open} is the connection being retired and every call sent on it is
     * back (or {@code force}: the calls still out on it have had the time a call may take), closes
     * it (on the connector) and sends what waits, on the connection made meanwhile or a new one.
     * {@link #settled} checks after its decrement, and {@link #demoted} marks it retired while the
     * call it handles is still counted, so the last call back finds the count at 0 and the mark set.
     */
    private void retired(Link open, boolean force) {
        if (retiring != open || (!force && open.inFlight.get() != 0)) {
            return;
        }
        retiring = null;
        try {
            connector.execute(open::close);
        } catch (RejectedExecutionException e) {
            open.close();
        }
        if (!waiting.isEmpty()) {
            connectIfNeeded();
        }
    }

    /**
     * @return whether Redis refused a call as a replica does a write ({@code READONLY You can't
     *         write against a read only replica}): the server is no master (any more)
     */
    static boolean readOnly(Throwable error) {
        Throwable cause = cause(error);
        String message = cause instanceof RedisCommandExecutionException ? cause.getMessage() : null;
        return message != null && (message.startsWith("READONLY") || message.contains(" READONLY "));
    }

    /**
     * The server of {@code open} refused a write as a replica: a failover demoted it (a Sentinel's
     * {@code SENTINEL FAILOVER}, or the old master coming back as a replica), and this connection
     * would go on talking to it. So it is dropped now and a new one made at once, which Lettuce
     * makes to the master the Sentinel names, without waiting for a lease to run out or for
     * Lettuce's reconnect backoff. {@code requeue} (a call refused for the first time on a dropped
     * connection) goes back in line where it was made; the calls still out on the dropped connection
     * come back first (refused too, as it is a replica), then the line goes out on the new one, in
     * order. At most one connection is dropped per {@link #READ_ONLY_RECONNECT_SPACING}: within it,
     * a call the connection made anew refuses fails (the same read-only server again).
     * Logged at WARN at most once per {@link #READ_ONLY_WARN_PERIOD}.
     *
     * @return whether {@code requeue} was put back in line
     */
    private boolean demoted(Link open, @Nullable Waiting requeue) {
        boolean drop;
        boolean requeued;
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            long now = System.nanoTime();
            drop = link == open && (lastReadOnlyDropNanos == NONE
                    || now - lastReadOnlyDropNanos >= READ_ONLY_RECONNECT_SPACING.toNanos());
            if (drop) {
                lastReadOnlyDropNanos = now;
                link = null;
                current = null;
                open.retired = true;
                if (retiring != null) {
                    // Dropped a second ago or more, and calls are still out on it: its server does not
                    // answer them, and they fail as it closes, as they would when they time out.
                    retired(retiring, true);
                }
                retiring = open;
                // However its server answers, the line waits no longer than a call may take.
                try {
                    CompletableFuture.delayedExecutor(timeout.toNanos(), TimeUnit.NANOSECONDS, connector)
                            .execute(() -> {
                                lock.lock();
                                try {
                                    retired(open, true);
                                } finally {
                                    lock.unlock();
                                }
                            });
                } catch (RejectedExecutionException e) {
                    // closing
                }
            }
            requeued = requeue != null && open.retired;
            if (requeued) {
                waiting.add(requeue);
            }
            if (drop || requeued) {
                connectIfNeeded();
            }
        } finally {
            lock.unlock();
        }
        if (drop) {
            long now = System.nanoTime();
            long last = lastReadOnlyWarnNanos;
            boolean warn = last == NONE || now - last > READ_ONLY_WARN_PERIOD.toNanos();
            lastReadOnlyWarnNanos = now;
            String message = "Redis refused a write of the semaphores with READONLY: the server they were connected"
                    + " to is a replica now (a failover demoted it, or the address names a replica); connecting to"
                    + " the master now, and sending the refused calls again there";
            if (warn) {
                log.warn(message);
            } else {
                log.debug(message);
            }
        }
        return requeued;
    }

    /** Under the lock: starts making a connection unless one is being made. */
    private void connectIfNeeded() {
        if (connecting || closed) {
            return;
        }
        connecting = true;
        try {
            connector.execute(this::connect);
        } catch (RejectedExecutionException e) {
            connecting = false;
            failWaiting(closed());
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
                if (retiring == null) {
                    drain(stale);
                }
                return;
            }
            link = null;
            current = null;
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
            fresh = open();
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
                lostOnce = true;
                waiting.removeIf(Waiting::givenUp);
                if (!waiting.isEmpty() || recovery.callsDue()) {
                    retryConnect();
                }
                return;
            }
            link = fresh;
            current = fresh.connection();
            lastAnswerNanos = System.nanoTime();
            firstUnansweredNanos.set(NONE);
            lastConnectFailure = null;
            recovered = lostOnce;
            lostOnce = true;
            if (retiring == null) {
                // (Else the calls still out on the connection dropped for a READONLY come back
                // first, to go back in line: the last of them sends the line, retired.)
                drain(fresh);
            }
        } finally {
            lock.unlock();
        }
        if (recovered) {
            log.info("The semaphores are connected to Redis again");
            silent.set(false);
            recovery.answersAgain(true);
        }
    }

    /** Under the lock: sends every waiting call whose caller still waits, in order. */
    private void drain(Link open) {
        for (Waiting next = waiting.poll(); next != null; next = waiting.poll()) {
            next.sendOn(open);
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
            failWaiting(closed());
        }
    }

    /**
     * A connection of the registry's own: by the factory's Lettuce client (whose address includes
     * the database, credentials, TLS and client name), with the library's timeout; or, for a
     * client with no address of its own, the factory's dedicated connection.
     */
    private Link open() {
        AbstractRedisClient client = lendFromFactory ? null : connectionFactory.getNativeClient();
        if (client instanceof RedisClusterClient cluster) {
            StatefulRedisClusterConnection<byte[], byte[]> connection = cluster.connect(ByteArrayCodec.INSTANCE);
            connection.setTimeout(timeout);
            return new Link(connection, connection.async(), null);
        }
        if (client instanceof RedisClient standalone) {
            listenTo(standalone);
            try {
                StatefulRedisConnection<byte[], byte[]> connection = standalone.connect(ByteArrayCodec.INSTANCE);
                connection.setTimeout(timeout);
                return new Link(connection, connection.async(), null);
            } catch (IllegalStateException e) {
                // "RedisURI is not available": a static master/replica client, whose nodes only
                // the factory knows.
                lendFromFactory = true;
            }
        }
        RedisConnection lent = connectionFactory.getConnection();
        try {
            RedisClusterAsyncCommands<byte[], byte[]> commands = dedicated(lent);
            StatefulConnection<byte[], byte[]> connection = commands instanceof RedisAsyncCommands<byte[], byte[]> one
                    ? one.getStatefulConnection()
                    : ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) commands).getStatefulConnection();
            return new Link(connection, commands, lent);
        } catch (RuntimeException e) {
            closeQuietly(lent);
            throw e;
        }
    }

    /** Listens to the reconnects of {@code client}'s connections (once). */
    private void listenTo(AbstractRedisClient client) {
        lock.lock();
        try {
            if (listened == null && !closed) {
                client.addListener(reconnects);
                listened = client;
            }
        } finally {
            lock.unlock();
        }
    }

    private static <V> void completeWith(CompletableFuture<V> reply, @Nullable V value, @Nullable Throwable error) {
        if (error != null) {
            reply.completeExceptionally(error);
        } else {
            reply.complete(value);
        }
    }

    /** Completes {@code reply}, noting whether Redis answered. */
    private <V> void complete(CompletableFuture<V> reply, @Nullable V value, @Nullable Throwable error) {
        if (error == null || cause(error) instanceof RedisCommandExecutionException) {
            answered();
        } else {
            unanswered();
        }
        completeWith(reply, value, error);
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

    /**
     * @return {@code reply} failing after {@link #timeout()} (or {@code limit}, for a call that
     *         also waits on the server) with {@link SemaphoreUnavailableException}, as does any
     *         failure; the value parsed
     */
    <R, T> CompletableFuture<T> within(SemaphoreKeys keys, CompletableFuture<R> reply, Duration limit,
                                       Function<R, T> parse) {
        return reply.orTimeout(limit.toNanos(), TimeUnit.NANOSECONDS)
                .handle((value, error) -> {
                    if (error != null) {
                        Throwable cause = cause(error);
                        if (cause instanceof TimeoutException) {
                            unanswered();
                            cause = noReply(limit);
                        }
                        throw unavailable(keys.name(), cause);
                    }
                    if (value == null) {
                        throw new SemaphoreUnavailableException(keys.name(),
                                "Redis gave no reply for semaphore '" + keys.name() + "'", null);
                    }
                    return parse.apply(value);
                });
    }

    /**
     * Why a call got no reply in time: no connection could be made (and why, the connect failure
     * kept as the cause so its own cause, such as {@code WRONGPASS} or a TLS error, is in the
     * trace), or Redis did not answer.
     */
    private RedisCommandTimeoutException noReply(Duration limit) {
        lock.lock();
        try {
            RuntimeException failure = lastConnectFailure;
            if (link == null && failure != null) {
                RedisCommandTimeoutException timeout = new RedisCommandTimeoutException(
                        "no connection to Redis within " + limit.toMillis() + " ms (" + describe(failure)
                                + refused(failure) + ")");
                timeout.initCause(failure);
                return timeout;
            }
        } finally {
            lock.unlock();
        }
        return new RedisCommandTimeoutException("no reply within " + limit.toMillis() + " ms");
    }

    /**
     * @return a connect failure's message, and its root cause's when that says more (the server's
     *         reply, a TLS error)
     */
    private static String describe(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = String.valueOf(failure.getMessage());
        return root == failure || root.getMessage() == null || message.contains(root.getMessage())
                ? message : message + ": " + root.getMessage();
    }

    /** @return why a connection could not be made when the server refused a command it needs, else "" */
    private static String refused(Throwable connectFailure) {
        Refusal refusal = Refusal.of(connectFailure, null);
        return refusal == null ? "" : ": the server refused " + refusal.what() + ", which the client needs to connect"
                + " (Redis: \"" + refusal.reply().strip() + "\"); " + (refusal.kind().byAcl()
                        ? "give the Redis user the ACL rule of " + Refusal.ACL_DOCS
                        : "see docs/compatibility.md");
    }

    static SemaphoreException unavailable(String name, Throwable error) {
        if (error instanceof SemaphoreException e) {
            return e;
        }
        return new SemaphoreUnavailableException(name,
                "Redis unavailable for semaphore '" + name + "': " + error.getMessage(), error);
    }

    static Throwable cause(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /**
     * Sends {@code command} on a connection of its own, and completes {@code reply} with its
     * outcome. Getting that connection connects or borrows from a pool, so it is done on the
     * {@link #lender}; the connection is closed on {@code closer} (closing blocks, which Lettuce's
     * event loop must not).
     */
    <R> void sendDedicated(CompletableFuture<R> reply, SemaphoreKeys keys, Executor closer,
                           Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletableFuture<R>> command) {
        try {
            lender.execute(() -> {
                RedisConnection connection = null;
                try {
                    connection = connectionFactory.getConnection();
                    RedisClusterAsyncCommands<byte[], byte[]> redis = toSlotMaster(dedicated(connection), keys);
                    if (reply.isDone()) {
                        closeQuietly(connection);
                        return;
                    }
                    CompletableFuture<R> sent = command.apply(redis);
                    RedisConnection used = connection;
                    sent.whenCompleteAsync((value, error) -> closeQuietly(used), closer);
                    sent.whenComplete((value, error) -> complete(reply, value, error));
                } catch (RuntimeException e) {
                    if (connection != null) {
                        closeQuietly(connection);
                    }
                    reply.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(closed());
        }
    }

    /**
     * A connection no other caller uses: in a pipeline, Spring Data Redis hands out a dedicated
     * connection (from the factory's pool, if it has one) instead of the shared one. Its commands
     * are flushed as they are sent: the factory's pipelining flush policy (an application may set
     * {@code flushOnClose()} or {@code buffered(n)}) holds back only what goes through Spring's
     * pipeline, and turns automatic flushing off on the connection until the pipeline closes, which
     * would leave the calls sent on it unsent until they time out.
     */
    private static RedisClusterAsyncCommands<byte[], byte[]> dedicated(RedisConnection connection) {
        connection.openPipeline();
        RedisClusterAsyncCommands<byte[], byte[]> redis = ((LettuceConnection) connection).getNativeConnection();
        if (redis instanceof RedisAsyncCommands<byte[], byte[]> standalone) {
            standalone.getStatefulConnection().setAutoFlushCommands(true);
        }
        if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            // Applies to its node connections too, the one to the slot's master included.
            cluster.getStatefulConnection().setAutoFlushCommands(true);
        }
        return redis;
    }

    /** On a Cluster, the connection to the master of the semaphore's slot, as {@code WAIT} has no key to route by. */
    private static RedisClusterAsyncCommands<byte[], byte[]> toSlotMaster(
            RedisClusterAsyncCommands<byte[], byte[]> redis, SemaphoreKeys keys) {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            RedisClusterNode master = cluster.getStatefulConnection().getPartitions()
                    .getMasterBySlot(SlotHash.getSlot(keys.encoded().get(0)));
            if (master == null) {
                throw new SemaphoreUnavailableException(keys.name(),
                        "No master known for semaphore '" + keys.name() + "'", null);
            }
            return cluster.getConnection(master.getNodeId());
        }
        return redis;
    }

    private static void closeQuietly(RedisConnection connection) {
        try {
            connection.closePipeline();
        } catch (RuntimeException ignored) {
            // Nothing was queued through Spring's pipeline: there is nothing to lose here.
        }
        try {
            connection.close();
        } catch (RuntimeException ignored) {
            // A connection that failed to close is Lettuce's to reclaim.
        }
    }

    /** Fails what waits, and closes the library's connection. Idempotent. */
    @Override
    public void close() {
        Link open;
        Link dropped;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            open = link;
            link = null;
            dropped = retiring;
            retiring = null;
            current = null;
            if (listened != null) {
                listened.removeListener(reconnects);
                listened = null;
            }
            failWaiting(closed());
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

    /** Under the lock. */
    private void failWaiting(RuntimeException failure) {
        for (Waiting next = waiting.poll(); next != null; next = waiting.poll()) {
            next.reply.completeExceptionally(failure);
        }
    }

    private static SemaphoreUnavailableException closed() {
        return new SemaphoreUnavailableException("The semaphore registry is closed");
    }

    /**
     * The library's connection: its commands, and the Spring connection it was lent from when it
     * is the factory's (closed through it), else null.
     */
    private static final class Link {

        private final StatefulConnection<byte[], byte[]> connection;
        private final RedisClusterAsyncCommands<byte[], byte[]> commands;
        private final @Nullable RedisConnection lent;
        /** Calls sent on it whose reply has not been handled yet. */
        final AtomicInteger inFlight = new AtomicInteger();
        /** Dropped for a READONLY (set under the lock): its refused calls are sent again. */
        volatile boolean retired;

        Link(StatefulConnection<byte[], byte[]> connection, RedisClusterAsyncCommands<byte[], byte[]> commands,
             @Nullable RedisConnection lent) {
            this.connection = connection;
            this.commands = commands;
            this.lent = lent;
        }

        StatefulConnection<byte[], byte[]> connection() {
            return connection;
        }

        RedisClusterAsyncCommands<byte[], byte[]> commands() {
            return commands;
        }

        boolean isOpen() {
            return connection.isOpen();
        }

        void close() {
            if (lent != null) {
                closeQuietly(lent);
            } else {
                connection.closeAsync();
            }
        }
    }

    /** A call made while no connection was open: sent, in its caller's observation, once one is. */
    private static final class Waiting {

        /** Its place in line. */
        final long order;
        private final CompletableFuture<?> reply;
        private final Runnable send;
        private @Nullable Link target;

        Waiting(long order, CompletableFuture<?> reply, UnaryOperator<Runnable> inCallersScope,
                Consumer<Link> sendOn) {
            this.order = order;
            this.reply = reply;
            this.send = inCallersScope.apply(() -> sendOn.accept(Objects.requireNonNull(target, "target")));
        }

        /** @return whether the caller gave up: it is not sent at all */
        boolean givenUp() {
            return reply.isDone();
        }

        void sendOn(Link open) {
            if (!givenUp()) {
                target = open;
                send.run();
            }
        }
    }
}
