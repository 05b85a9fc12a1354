package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.ReplicasUnsupportedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Learns, once per registry, whether the server runs {@code WAIT} for this client, before the
 * first grant that waits for replicas: {@code WAIT 0 0}, which returns at once (no replica is
 * waited for) and changes nothing. Managed offerings leave {@code WAIT} out (ElastiCache
 * Serverless, Redis Cloud's Essentials plans answer "unknown command") or refuse it to a user
 * ({@code NOPERM}); without this check, such a grant would be made in Redis and then fail at run
 * time. Only registries with settings that wait for replicas send it, so the ACL rule of
 * everybody else needs no {@code +wait}. A check that got no answer (Redis unreachable) is made
 * again by the next call that needs it.
 */
public final class WaitCheck {

    private static final Logger log = LoggerFactory.getLogger(WaitCheck.class);

    private final RedisConnections connections;
    /** Lends the connection the check is sent on. */
    private final DedicatedConnections dedicated;
    /** Where the connection the check was sent on is closed. */
    private final Executor closer;
    /** The check made, or being made: null until then, or after one that got no answer. */
    private final AtomicReference<@Nullable CompletableFuture<@Nullable Refusal>> learnt = new AtomicReference<>();

    /**
     * @param connections the library's connection, for the Redis timeout
     * @param dedicated   lends the connection the check is sent on
     * @param closer      where that connection is closed
     */
    public WaitCheck(RedisConnections connections, DedicatedConnections dedicated, Executor closer) {
        this.connections = connections;
        this.dedicated = dedicated;
        this.closer = closer;
    }

    /**
     * @param keys a semaphore's keys: on a Redis Cluster, {@code WAIT} goes to its slot's master
     * @return the refusal of {@code WAIT}, or null when the server runs it; failing with
     *         {@link io.github.redissemaphore.core.SemaphoreUnavailableException} when Redis did not
     *         answer within the Redis timeout (the next call checks again)
     */
    public CompletableFuture<@Nullable Refusal> refusal(SemaphoreKeys keys) {
        return refusal(keys, connections.timeout());
    }

    /**
     * Like {@link #refusal(SemaphoreKeys)}, waiting up to {@code limit} for the answer: at start-up,
     * the first connection of a cold client (threads, classes, TLS) may take longer than a call.
     */
    public CompletableFuture<@Nullable Refusal> refusal(SemaphoreKeys keys, Duration limit) {
        CompletableFuture<@Nullable Refusal> known = learnt.get();
        if (known != null && !known.isCompletedExceptionally()) {
            return known;
        }
        CompletableFuture<@Nullable Refusal> check = new CompletableFuture<>();
        if (!learnt.compareAndSet(known, check)) {
            return refusal(keys, limit);
        }
        CompletableFuture<Long> reply = new CompletableFuture<>();
        dedicated.send(reply, keys, closer, redis -> redis.waitForReplication(0, 0).toCompletableFuture());
        reply.orTimeout(limit.toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete((acknowledged, error) -> {
                    Refusal refusal = error == null ? null : Refusal.of(error, null);
                    if (error != null && refusal == null) {
                        Throwable cause = CallFailures.cause(error);
                        check.completeExceptionally(cause instanceof TimeoutException
                                ? new SemaphoreUnavailableException(keys.name(), Reason.NO_ANSWER,
                                        "Redis did not answer WAIT 0 0 within "
                                        + limit.toMillis() + " ms", cause)
                                : CallFailures.unavailable(keys.name(), cause));
                        return;
                    }
                    if (refusal != null) {
                        log.warn("Redis refuses WAIT to the semaphores ({}): a semaphore whose settings wait for"
                                + " replicas fails here; set replicas to 0{}", refusal.reply().strip(),
                                refusal.kind().byAcl() ? " or give the Redis user +set +wait" : "");
                    }
                    check.complete(refusal);
                });
        return check;
    }

    /**
     * @param refusal    what the server answered to {@code WAIT}
     * @param semaphores the semaphores whose settings wait for replicas
     * @param defaults   whether the default settings do
     * @return the exception that tells the user so, in the terms of {@code SemaphoreSettings}
     */
    public static ReplicasUnsupportedException unsupported(Refusal refusal, List<String> semaphores, boolean defaults) {
        List<String> who = new ArrayList<>();
        semaphores.forEach(name -> who.add("semaphore '" + name + "'"));
        if (defaults) {
            who.add("the default settings");
        }
        String why = refusal.kind().byAcl()
                ? "the ACL of the Redis user does not allow WAIT"
                : "this Redis server has no WAIT command (as ElastiCache Serverless and Redis Cloud's Essentials"
                        + " plans, see docs/compatibility.md)";
        String fix = refusal.kind().byAcl()
                ? "Set replicas to 0, or give the Redis user +set +wait (" + Refusal.ACL_DOCS + ")."
                : "Set replicas to 0: this server cannot wait for replicas.";
        String verb = who.size() == 1 && !defaults ? " waits" : " wait";
        return new ReplicasUnsupportedException(String.join(", ", who) + verb + " for replicas to acknowledge each"
                + " grant (replicas above 0), but " + why + " (Redis: \"" + refusal.reply().strip() + "\"). " + fix,
                semaphores, defaults, refusal.kind().byAcl(), refusal.reply());
    }
}
