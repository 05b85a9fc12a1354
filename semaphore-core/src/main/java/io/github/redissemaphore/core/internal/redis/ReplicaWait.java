package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.SetArgs;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Runs a script call that must be acknowledged by replicas: the script, then a write of the
 * semaphore's replication marker (so the writes the {@code WAIT} counts include this call's even
 * if the script changed nothing), then {@code WAIT}, all on a connection of their own, because
 * {@code WAIT} blocks the connection it is sent on (and counts only that connection's writes), and
 * other callers' commands must not queue behind it on the library's connection. Fails after
 * {@link RedisConnections#timeout()} plus the replication timeout, lending the connection included.
 */
public final class ReplicaWait {

    private final RedisConnections connections;
    private final DedicatedConnections dedicated;
    private final WaitCheck waitCheck;

    /**
     * Lends, for {@code WAIT}, connections of their own ({@link DedicatedConnections}), and learns
     * whether the server runs {@code WAIT} before the first call that needs it ({@link WaitCheck}).
     *
     * @param connections the library's connection, for the Redis timeout, the bound of a call and
     *                    the factory the lent connections come from
     * @param lender      where a connection is lent (connecting may block)
     * @param closer      where a lent connection is closed
     */
    public ReplicaWait(RedisConnections connections, Executor lender, Executor closer) {
        this.connections = connections;
        this.dedicated = new DedicatedConnections(connections, lender);
        this.waitCheck = new WaitCheck(connections, dedicated, closer);
    }

    /** @return what learns whether the server runs {@code WAIT} (asked at start-up, too) */
    public WaitCheck waitCheck() {
        return waitCheck;
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

    /**
     * Sends {@code call}, the marker and {@code WAIT}, without waiting for the reply; fails with
     * {@link io.github.redissemaphore.core.ReplicasUnsupportedException}, sending nothing, on a
     * server that refuses {@code WAIT} ({@link WaitCheck}).
     */
    public <T> CompletableFuture<Replicated<T>> send(SemaphoreKeys keys, ScriptCall<T> call, Replication replication) {
        return waitCheck.refusal(keys).thenCompose(refusal -> {
            if (refusal != null) {
                throw WaitCheck.unsupported(refusal, List.of(keys.name()), false);
            }
            return sendChecked(keys, call, replication);
        });
    }

    private <T> CompletableFuture<Replicated<T>> sendChecked(SemaphoreKeys keys, ScriptCall<T> call,
                                                             Replication replication) {
        CompletableFuture<Replicated<List<Object>>> reply = new CompletableFuture<>();
        byte[][] args = ScriptRunner.encode(keys.argv(call.args()));
        byte[] marker = keys.replicationMarker();
        long timeoutMillis = waitMillis(replication.timeout());
        long markerMillis = timeoutMillis + connections.timeout().toMillis();
        dedicated.send(reply, keys, replication.closer(), redis ->
                ScriptRunner.eval(redis, call, keys.bytes(), args)
                        .thenCompose(value -> redis.set(marker, new byte[] {'1'}, SetArgs.Builder.px(markerMillis))
                                .toCompletableFuture()
                                .thenCompose(ok -> redis.waitForReplication(replication.replicas(), timeoutMillis)
                                        .toCompletableFuture())
                                .thenApply(acknowledged -> new Replicated<>(value, acknowledged.intValue()))));
        return RefusedCalls.explained(connections.within(keys, reply, connections.timeout().plus(replication.timeout()),
                replicated -> new Replicated<>(call.parse(new Reply(replicated.reply())), replicated.acknowledged())),
                keys, call, " with the SET and WAIT for replicas after it");
    }

    /**
     * How long {@code WAIT} may block on the server: the replication timeout, but short enough to
     * be answered before Lettuce's command timeout on the factory's connection gives up on it (a
     * quarter of that timeout is left for the reply to travel). The call as a whole is bounded by
     * the Redis timeout plus the replication timeout.
     */
    long waitMillis(Duration replicationTimeout) {
        long timeout = dedicated.timeout().toMillis();
        return Math.max(1, Math.min(replicationTimeout.toMillis(), timeout * 3 / 4));
    }
}
