package io.github.redissemaphore.core.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the semaphore scripts: the one place that knows their arguments and replies. Every method
 * is exactly one Redis call (EVALSHA; EVAL once more when the server's script cache does not have
 * the script, as after a restart, a failover or {@code SCRIPT FLUSH}), and any Redis failure
 * surfaces as {@link SemaphoreUnavailableException}.
 *
 * <p>Calls go straight to Lettuce's asynchronous API on the connection factory's shared
 * connection, so no thread waits for a reply unless it asks to: the {@code …Async} methods return
 * at once (background clean-ups, renewals and deadlines never hold a thread while Redis is slow or
 * down), and the others wait for the reply on the caller's thread. Each call fails after the
 * factory's command timeout, counted from the moment it was asked for: getting a connection is
 * part of the call (see {@link #run}).
 *
 * <p>A grant that must wait for replicas ({@code …Replicated} methods) is the exception: its
 * script and the {@code WAIT} after it run on a connection of their own, because {@code WAIT}
 * blocks the connection it is sent on (and counts only that connection's writes), and other
 * callers' commands must not queue behind it on the shared one.
 */
public final class SemaphoreCommands {

    /**
     * Index of a script's own first entry: after used, limit, waiters, server time, earliest lease
     * end, the configured limit of the previous call and the override.
     */
    private static final int OWN = 7;

    private final LettuceConnectionFactory connectionFactory;
    private final SemaphoreScripts scripts;
    private final Duration timeout;
    /**
     * Where a connection is lent (and given back) when that may take I/O: a connect, a PING, a
     * pool. Never Lettuce's event loop, and never the scheduler that times deadlines and renewals.
     */
    private final Executor lender;
    /**
     * The factory shares one native connection, does not validate it, and has lent it once: from
     * now on lending it does no I/O (Lettuce reconnects that connection by itself).
     */
    private volatile boolean sharedConnectionLent;

    /** Lends connections that may take I/O to get on the common pool: for tools and tests. */
    public SemaphoreCommands(RedisConnectionFactory connectionFactory, SemaphoreScripts scripts) {
        this(connectionFactory, scripts, ForkJoinPool.commonPool());
    }

    /**
     * @param lender where a connection is lent and given back when that may block (a connect, a
     *               validation, a pool): not Lettuce's event loop, and not a thread whose lateness
     *               delays anything else
     */
    public SemaphoreCommands(RedisConnectionFactory connectionFactory, SemaphoreScripts scripts, Executor lender) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalArgumentException("The semaphore needs a LettuceConnectionFactory (Spring Data Redis with"
                    + " Lettuce), but got " + connectionFactory);
        }
        this.connectionFactory = lettuce;
        this.scripts = scripts;
        this.timeout = lettuce.getClientConfiguration().getCommandTimeout();
        this.lender = Objects.requireNonNull(lender, "lender");
    }

    /** @return how long a call may take before it fails: the connection factory's command timeout */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Usage figures every script returns: the values for gauges, free of charge.
     * {@code limit} is the limit of the call: the override when one is set, else the caller's;
     * {@code serverMicros} (Redis server time) tells which of two figures is newer;
     * {@code earliestLeaseEndMillis} is how long until the earliest lease ends, at most (-1: no
     * lease), so a JVM with waiters can call again the moment an expired lease frees a permit;
     * {@code previousConfiguredLimit} is the configured limit the previous call carried (0: none
     * known), from which a JVM configured otherwise learns of the mismatch; {@code override} is
     * the runtime limit set in Redis (0: none).
     */
    public record Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis,
                        int previousConfiguredLimit, int override) {
        /** @return permits free now */
        public int available() {
            return Math.max(limit - used, 0);
        }

        /** @return whether {@code limit} is a runtime limit set in Redis rather than the caller's own */
        public boolean overridden() {
            return override > 0;
        }
    }

    /** What {@code acquire} did. */
    public record Acquired(Usage usage, Status status, long token) {
        /** Granted, queued or refused. */
        public enum Status { REFUSED, GRANTED, QUEUED }
    }

    /**
     * What {@code release} did: {@code released} is false when the id held nothing, or when
     * {@code ownedElsewhere}: another JVM adopted it and the release named this JVM's inbox;
     * {@code left} is what the lease still holds (0 when it is gone).
     */
    public record Released(Usage usage, boolean released, boolean ownedElsewhere, int left) {
    }

    /**
     * What {@code renew} found: per id, a token (holds), {@link #WAITING}, {@link #GONE} or
     * {@link #ADOPTED}; and per id, the lease it was extended by ({@link Duration#ZERO} unless it holds).
     */
    public record Renewed(Usage usage, int renewed, List<Long> statuses, List<Duration> leases) {
        /** Still in the queue. */
        public static final long WAITING = 0;
        /** Neither held nor waiting any more. */
        public static final long GONE = -1;
        /** Held, but another JVM adopted it: not extended. */
        public static final long ADOPTED = -2;
    }

    /**
     * What {@code lease} (adopt or extend) did; when {@code status} is {@link Status#HELD}, the
     * lease now ends {@code lease} from the reply's server time, and {@code count} and
     * {@code token} are the holder's.
     */
    public record Leased(Usage usage, Status status, int count, long token, Duration lease) {
        /** Whether the id holds, holds nothing, or is owned by another JVM (extend only). */
        public enum Status { OWNED_ELSEWHERE, GONE, HELD }
    }

    /** What {@code cancel} did: {@code grantedToken} is 0 when the waiter left the queue. */
    public record Cancelled(Usage usage, long grantedToken) {
    }

    /** What {@code state} read, with the usage figures every reply carries. */
    public record State(Usage usage, SemaphoreState state) {
    }

    /**
     * A script's reply, and how many replicas acknowledged every write up to it within the
     * replication timeout (Redis {@code WAIT}).
     */
    public record Replicated<T>(T reply, int acknowledged) {
    }

    /** How long to wait for how many replicas, and where to close the connection that waited. */
    public record Replication(int replicas, Duration timeout, Executor closer) {
    }

    /** Grants, queues or refuses {@code count} permits for the lease {@code id}. */
    public Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, boolean wait,
                            boolean fair, Duration heartbeat, String inbox, String owner) {
        return await(keys, acquireAsync(keys, limit, id, count, lease, wait, fair, heartbeat, inbox, owner));
    }

    /** {@link #acquire}, without waiting for the reply. */
    public CompletableFuture<Acquired> acquireAsync(SemaphoreKeys keys, int limit, String id, int count,
                                                    Duration lease, boolean wait, boolean fair, Duration heartbeat,
                                                    String inbox, String owner) {
        return run(keys, scripts.acquire(), reply -> new Acquired(usage(reply),
                        Acquired.Status.values()[(int) number(reply, OWN)], number(reply, OWN + 1)),
                String.valueOf(limit), id, String.valueOf(count), millis(lease), flag(wait), flag(fair),
                millis(heartbeat), inbox, owner);
    }

    /**
     * {@link #acquireAsync}, on a connection of its own, followed by {@code WAIT} for the replicas:
     * a grant in the reply has been acknowledged by {@link Replicated#acknowledged()} replicas.
     */
    public CompletableFuture<Replicated<Acquired>> acquireReplicatedAsync(SemaphoreKeys keys, int limit, String id,
            int count, Duration lease, boolean wait, boolean fair, Duration heartbeat, String inbox, String owner,
            Replication replication) {
        return runReplicated(keys, scripts.acquire(), reply -> new Acquired(usage(reply),
                        Acquired.Status.values()[(int) number(reply, OWN)], number(reply, OWN + 1)), replication,
                String.valueOf(limit), id, String.valueOf(count), millis(lease), flag(wait), flag(fair),
                millis(heartbeat), inbox, owner);
    }

    /**
     * {@link #renewAsync} of one id, on a connection of its own, followed by {@code WAIT} for the
     * replicas: how a grant handed over by another JVM (a claim) is confirmed and replicated.
     */
    public CompletableFuture<Replicated<Renewed>> renewReplicatedAsync(SemaphoreKeys keys, int limit,
            Duration heartbeat, String inbox, String id, Replication replication) {
        return runReplicated(keys, scripts.renew(), reply -> renewed(reply, 1), replication,
                String.valueOf(limit), millis(heartbeat), inbox, id);
    }

    /** Gives the lease {@code id} back, whichever JVM holds it. */
    public Released release(SemaphoreKeys keys, int limit, String id) {
        return await(keys, run(keys, scripts.release(), SemaphoreCommands::released, String.valueOf(limit), id));
    }

    /**
     * Gives permits of lease {@code id} back so it keeps at most {@code keep} (0: none), if the JVM
     * of {@code inbox} owns it.
     */
    public Released release(SemaphoreKeys keys, int limit, String id, int keep, String inbox) {
        return await(keys, releaseAsync(keys, limit, id, keep, inbox));
    }

    /** {@link #release(SemaphoreKeys, int, String, int, String)}, without waiting for the reply. */
    public CompletableFuture<Released> releaseAsync(SemaphoreKeys keys, int limit, String id, int keep, String inbox) {
        return run(keys, scripts.release(), SemaphoreCommands::released, String.valueOf(limit), id,
                String.valueOf(keep), inbox);
    }

    /**
     * Gives the lease {@code id} back, whichever JVM owns it; that JVM, if it is not the one of
     * {@code inbox}, is told on its inbox, as after an adoption: it hears of a hand-over, not of a
     * lost lease. One call, so nothing is left half done if it fails.
     */
    public Released releaseHandingOver(SemaphoreKeys keys, int limit, String id, String inbox) {
        return await(keys, run(keys, scripts.release(), SemaphoreCommands::released, String.valueOf(limit), id, "0",
                inbox, "1"));
    }

    private static Released released(List<Object> reply) {
        long status = number(reply, OWN);
        return new Released(usage(reply), status == 1, status == -1, (int) number(reply, OWN + 1));
    }

    /**
     * Extends the leases (each by its own length) and refreshes the waiters that the JVM of
     * {@code inbox} has on one semaphore, in one call.
     */
    public Renewed renew(SemaphoreKeys keys, int limit, Duration heartbeat, String inbox, List<String> ids) {
        return await(keys, renewAsync(keys, limit, heartbeat, inbox, ids));
    }

    /** {@link #renew}, without waiting for the reply. */
    public CompletableFuture<Renewed> renewAsync(SemaphoreKeys keys, int limit, Duration heartbeat, String inbox,
                                                 List<String> ids) {
        String[] args = new String[ids.size() + 3];
        args[0] = String.valueOf(limit);
        args[1] = millis(heartbeat);
        args[2] = inbox;
        for (int i = 0; i < ids.size(); i++) {
            args[i + 3] = ids.get(i);
        }
        return run(keys, scripts.renew(), reply -> renewed(reply, ids.size()), args);
    }

    private static Renewed renewed(List<Object> reply, int ids) {
        List<Long> statuses = new ArrayList<>(ids);
        List<Duration> leases = new ArrayList<>(ids);
        for (int i = 0; i < ids; i++) {
            statuses.add(number(reply, OWN + 1 + i));
            leases.add(Duration.ofMillis(number(reply, OWN + 1 + ids + i)));
        }
        return new Renewed(usage(reply), (int) number(reply, OWN), statuses, leases);
    }

    /**
     * The JVM of {@code inbox} takes over lease {@code id}, whoever owned it, keeping its lease
     * length; {@code owner} is recorded with it.
     */
    public Leased adopt(SemaphoreKeys keys, int limit, String id, String inbox, String owner) {
        return await(keys, lease(keys, limit, id, Duration.ZERO, inbox, true, owner));
    }

    /** The lease {@code id}, if the JVM of {@code inbox} owns it, ends {@code lease} from now and is renewed by it. */
    public Leased extend(SemaphoreKeys keys, int limit, String id, Duration lease, String inbox) {
        return await(keys, lease(keys, limit, id, lease, inbox, false, ""));
    }

    private CompletableFuture<Leased> lease(SemaphoreKeys keys, int limit, String id, Duration lease, String inbox,
                                            boolean takeOver, String owner) {
        return run(keys, scripts.lease(), reply -> new Leased(usage(reply),
                        Leased.Status.values()[(int) number(reply, OWN) + 1], (int) number(reply, OWN + 1),
                        number(reply, OWN + 2), Duration.ofMillis(number(reply, OWN + 3))),
                String.valueOf(limit), id, millis(lease), inbox, flag(takeOver), owner);
    }

    /** Takes waiter {@code id} out of the queue; with {@code release}, gives back a grant it got meanwhile. */
    public Cancelled cancel(SemaphoreKeys keys, int limit, String id, boolean release) {
        return await(keys, cancelAsync(keys, limit, id, release));
    }

    /** {@link #cancel}, without waiting for the reply. */
    public CompletableFuture<Cancelled> cancelAsync(SemaphoreKeys keys, int limit, String id, boolean release) {
        return run(keys, scripts.cancel(), reply -> new Cancelled(usage(reply), number(reply, OWN)),
                String.valueOf(limit), id, flag(release));
    }

    /** Reads the semaphore, listing at most {@code most} holders and waiters. */
    public State state(SemaphoreKeys keys, int limit, int most) {
        return await(keys, run(keys, scripts.state(), reply -> {
            Usage usage = usage(reply);
            List<SemaphoreState.Holder> holders = new ArrayList<>();
            for (Object entry : (List<?>) reply.get(OWN)) {
                List<?> h = (List<?>) entry;
                holders.add(new SemaphoreState.Holder(text(h.get(0)), ((Number) h.get(1)).intValue(),
                        ((Number) h.get(2)).longValue(), text(h.get(3)),
                        Duration.ofMillis(Math.max(((Number) h.get(4)).longValue(), 0))));
            }
            List<SemaphoreState.Waiter> waiters = new ArrayList<>();
            for (Object entry : (List<?>) reply.get(OWN + 1)) {
                List<?> w = (List<?>) entry;
                waiters.add(new SemaphoreState.Waiter(text(w.get(0)), ((Number) w.get(1)).intValue(), text(w.get(2))));
            }
            return new State(usage, new SemaphoreState(keys.name(), usage.limit(), usage.used(), usage.available(),
                    holders, waiters, limit, usage.overridden() ? SemaphoreState.OVERRIDE : SemaphoreState.CONFIGURED));
        }, String.valueOf(limit), String.valueOf(most)));
    }

    /**
     * Sets the runtime limit every call on the semaphore follows, whatever its caller is
     * configured with, and serves the queue under it at once; {@code override} 0 clears it, so
     * each caller's own limit applies again.
     *
     * @return the figures under the new limit
     */
    public Usage overrideLimit(SemaphoreKeys keys, int limit, int override) {
        return await(keys, run(keys, scripts.override(), SemaphoreCommands::usage, String.valueOf(limit),
                String.valueOf(override)));
    }

    /**
     * Sends one script call. The reply is parsed where it completes; a failure of any kind
     * (including the command timeout) completes the future with {@link SemaphoreUnavailableException}.
     *
     * <p>Where the connection is lent: any thread may call this, the scheduler's included, so
     * lending must not block it. With the factory's default, one shared native connection that is
     * not validated, lending it once it exists is a lookup (Lettuce keeps that one connection and
     * reconnects it by itself), so the call is sent right here: no thread hop on the hot path, and
     * the wrapper is given back at once (closing it does nothing to the shared connection). The
     * first call, and every call on a factory that lends per call (no sharing: a connect or a pool
     * per call; validation: a PING), lends on the {@link #lender} instead, and gives the
     * connection back there once the reply is in; the command timeout covers the lending too, so a
     * connect that hangs costs the caller no more than the timeout. A call whose caller gave up
     * before the connection came is not sent at all: a late acquire must not land after the
     * clean-up of its failure.
     */
    @SuppressWarnings("rawtypes")
    private <T> CompletableFuture<T> run(SemaphoreKeys keys, RedisScript<List> script, Function<List<Object>, T> parse,
                                         String... args) {
        CompletableFuture<List<Object>> reply = new CompletableFuture<>();
        if (sharedConnectionLent) {
            try {
                RedisConnection connection = connectionFactory.getConnection();
                try {
                    eval(nativeCommands(connection), script, keys.bytes(), encode(args)).whenComplete((value, error) ->
                            complete(reply, value, error));
                } finally {
                    connection.close();
                }
            } catch (RuntimeException e) {
                reply.completeExceptionally(e);
            }
        } else {
            lendAndSend(reply, script, keys.bytes(), encode(args));
        }
        return parsed(keys, reply, timeout, parse);
    }

    /** On the lender: lends a connection, sends the call on it unless the caller gave up, gives it back after. */
    @SuppressWarnings("rawtypes")
    private void lendAndSend(CompletableFuture<List<Object>> reply, RedisScript<List> script, byte[][] keys,
                             byte[][] args) {
        try {
            lender.execute(() -> {
                RedisConnection connection;
                try {
                    connection = connectionFactory.getConnection();
                } catch (RuntimeException e) {
                    reply.completeExceptionally(e);
                    return;
                }
                try {
                    if (reply.isDone()) {
                        closeQuietly(connection);
                        return;
                    }
                    CompletableFuture<List<Object>> sent = eval(nativeCommands(connection), script, keys, args);
                    if (connectionFactory.getShareNativeConnection() && !connectionFactory.getValidateConnection()) {
                        sharedConnectionLent = true;
                    }
                    sent.whenCompleteAsync((value, error) -> closeQuietly(connection), lender);
                    sent.whenComplete((value, error) -> complete(reply, value, error));
                } catch (RuntimeException e) {
                    closeQuietly(connection);
                    reply.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new SemaphoreUnavailableException("The semaphore registry is closed", e));
        }
    }

    private static <V> void complete(CompletableFuture<V> reply, V value, Throwable error) {
        if (error != null) {
            reply.completeExceptionally(error);
        } else {
            reply.complete(value);
        }
    }

    /**
     * Sends one script call, then a write of the semaphore's replication marker (so the writes the
     * {@code WAIT} counts include this call's even if the script changed nothing), then
     * {@code WAIT}, all on a connection of their own. Getting that connection connects or borrows
     * from a pool, so it is done on the {@link #lender}, like a first call; the connection is
     * closed on the replication's executor (closing blocks, which Lettuce's event loop must not).
     * Fails after the command timeout plus the replication timeout, lending included.
     */
    @SuppressWarnings("rawtypes")
    private <T> CompletableFuture<Replicated<T>> runReplicated(SemaphoreKeys keys, RedisScript<List> script,
            Function<List<Object>, T> parse, Replication replication, String... args) {
        CompletableFuture<Replicated<List<Object>>> reply = new CompletableFuture<>();
        try {
            lender.execute(() -> sendReplicated(reply, keys, script, replication, encode(args)));
        } catch (RejectedExecutionException e) {
            reply.completeExceptionally(new SemaphoreUnavailableException("The semaphore registry is closed", e));
        }
        return parsed(keys, reply, timeout.plus(replication.timeout()),
                replicated -> new Replicated<>(parse.apply(replicated.reply()), replicated.acknowledged()));
    }

    /** On the lender: lends a connection of its own, and sends the call, the marker and WAIT on it. */
    @SuppressWarnings("rawtypes")
    private void sendReplicated(CompletableFuture<Replicated<List<Object>>> reply, SemaphoreKeys keys,
                                RedisScript<List> script, Replication replication, byte[][] args) {
        RedisConnection connection = null;
        try {
            connection = connectionFactory.getConnection();
            RedisClusterAsyncCommands<byte[], byte[]> redis = dedicatedCommands(connection, keys);
            if (reply.isDone()) {
                closeQuietly(connection);
                return;
            }
            byte[] marker = keys.replicationMarker();
            long timeoutMillis = waitMillis(replication.timeout());
            CompletableFuture<Replicated<List<Object>>> sent = eval(redis, script, keys.bytes(), args)
                    .thenCompose(value -> redis.set(marker, new byte[] {'1'},
                                    SetArgs.Builder.px(timeoutMillis + timeout.toMillis())).toCompletableFuture()
                            .thenCompose(ok -> redis.waitForReplication(replication.replicas(), timeoutMillis)
                                    .toCompletableFuture())
                            .thenApply(acknowledged -> new Replicated<>(value, acknowledged.intValue())));
            RedisConnection used = connection;
            sent.whenCompleteAsync((value, error) -> closeQuietly(used), replication.closer());
            sent.whenComplete((value, error) -> complete(reply, value, error));
        } catch (RuntimeException e) {
            if (connection != null) {
                closeQuietly(connection);
            }
            reply.completeExceptionally(e);
        }
    }

    /**
     * How long {@code WAIT} may block on the server: the replication timeout, but short enough to
     * be answered before the client library's own command timeout gives up on it (a quarter of
     * that timeout is left for the reply to travel).
     */
    long waitMillis(Duration replicationTimeout) {
        return Math.max(1, Math.min(replicationTimeout.toMillis(), timeout.toMillis() * 3 / 4));
    }

    /** EVALSHA; on a server whose script cache lacks the script (restart, failover, SCRIPT FLUSH), EVAL. */
    @SuppressWarnings("rawtypes")
    private static CompletableFuture<List<Object>> eval(RedisScriptingAsyncCommands<byte[], byte[]> redis,
            RedisScript<List> script, byte[][] keys, byte[][] args) {
        return redis.<List<Object>>evalsha(script.getSha1(), ScriptOutputType.MULTI, keys, args)
                .toCompletableFuture()
                .exceptionallyCompose(error -> cause(error) instanceof RedisNoScriptException
                        ? redis.<List<Object>>eval(script.getScriptAsString(), ScriptOutputType.MULTI, keys, args)
                                .toCompletableFuture()
                        : CompletableFuture.failedFuture(error));
    }

    /** The reply, parsed, within {@code limit}; any failure as {@link SemaphoreUnavailableException}. */
    private <R, T> CompletableFuture<T> parsed(SemaphoreKeys keys, CompletableFuture<R> reply, Duration limit,
                                               Function<R, T> parse) {
        return reply.orTimeout(limit.toNanos(), TimeUnit.NANOSECONDS)
                .handle((value, error) -> {
                    if (error != null) {
                        Throwable cause = cause(error);
                        throw unavailable(keys.name(), cause instanceof TimeoutException
                                ? new RedisCommandTimeoutException("no reply within " + limit.toMillis() + " ms")
                                : cause);
                    }
                    if (value == null) {
                        throw new SemaphoreUnavailableException(keys.name(),
                                "Redis gave no reply for semaphore '" + keys.name() + "'", null);
                    }
                    return parse.apply(value);
                });
    }

    private static byte[][] encode(String... args) {
        byte[][] bytes = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            bytes[i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    /**
     * A connection no other caller uses: in a pipeline, Spring Data Redis hands out a dedicated
     * connection (from the factory's pool, if it has one) instead of the shared one. Its commands
     * are flushed as they are sent: the factory's pipelining flush policy (an application may set
     * {@code flushOnClose()} or {@code buffered(n)}) holds back only what goes through Spring's
     * pipeline, and turns automatic flushing off on the connection until the pipeline closes, which
     * would leave the script, the marker and {@code WAIT} unsent until they time out. On a Cluster,
     * the connection to the master of the semaphore's slot, as {@code WAIT} has no key to route by.
     */
    private static RedisClusterAsyncCommands<byte[], byte[]> dedicatedCommands(RedisConnection connection,
                                                                                SemaphoreKeys keys) {
        connection.openPipeline();
        RedisClusterAsyncCommands<byte[], byte[]> redis = ((LettuceConnection) connection).getNativeConnection();
        if (redis instanceof RedisAsyncCommands<byte[], byte[]> standalone) {
            standalone.getStatefulConnection().setAutoFlushCommands(true);
        }
        if (redis instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
            // Applies to its node connections too, the one to the slot's master included.
            cluster.getStatefulConnection().setAutoFlushCommands(true);
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

    /** The factory's native connection (shared by default, which Lettuce reconnects by itself). */
    @SuppressWarnings("unchecked")
    private static RedisScriptingAsyncCommands<byte[], byte[]> nativeCommands(RedisConnection connection) {
        return (RedisScriptingAsyncCommands<byte[], byte[]>) ((LettuceConnection) connection).getNativeConnection();
    }

    /**
     * Waits for the reply of an {@code …Async} call on the caller's thread, at most the command
     * timeout (the future enforces it).
     *
     * @throws SemaphoreUnavailableException when the call failed, timed out or the wait was interrupted
     */
    public <T> T await(SemaphoreKeys keys, CompletableFuture<T> reply) {
        try {
            return reply.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SemaphoreUnavailableException(keys.name(), "Interrupted while waiting for Redis for semaphore '"
                    + keys.name() + "'", e);
        } catch (ExecutionException e) {
            throw unavailable(keys.name(), e.getCause());
        }
    }

    /**
     * @return the failure of a call of this class as the {@link SemaphoreException} it carries,
     *         for a caller that continues on the future of an {@code …Async} method
     */
    public static SemaphoreException failure(Throwable error) {
        Throwable cause = cause(error);
        return cause instanceof SemaphoreException e ? e
                : new SemaphoreUnavailableException("Redis unavailable: " + cause.getMessage(), cause);
    }

    private static SemaphoreException unavailable(String name, Throwable error) {
        if (error instanceof SemaphoreException e) {
            return e;
        }
        return new SemaphoreUnavailableException(name,
                "Redis unavailable for semaphore '" + name + "': " + error.getMessage(), error);
    }

    private static Throwable cause(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private static Usage usage(List<Object> reply) {
        return new Usage((int) number(reply, 0), (int) number(reply, 1), (int) number(reply, 2), number(reply, 3),
                number(reply, 4), (int) number(reply, 5), (int) number(reply, 6));
    }

    private static long number(List<Object> reply, int index) {
        return ((Number) reply.get(index)).longValue();
    }

    private static String text(Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    private static String millis(Duration duration) {
        return String.valueOf(duration.toMillis());
    }

    private static String flag(boolean value) {
        return value ? "1" : "0";
    }
}
