package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Runs the calls of one semaphore that grant permits (an acquire, the confirmation of a claim).
 * Without replicas to wait for, it is the {@link ScriptRunner}. With them
 * ({@code distributed-semaphore.replicas}), each call goes through the {@link ReplicaWait}, and
 * a reply that makes a lease held ({@link ScriptCall#held}) is handed on only once that many
 * replicas acknowledged it; one they did not acknowledge in time is given back first, so the
 * exception says what is true and a caller that tries again at once finds the permit free, and
 * then the call fails with {@link Reason#NOT_REPLICATED}. If Redis does not answer the give-back
 * within the Redis timeout, the call fails anyway and the give-back goes on in the background.
 */
public final class GrantRunner {

    /** Takes a lease that replicas did not acknowledge out of Redis, sent again until Redis answers. */
    @FunctionalInterface
    public interface GiveBack {

        /** @return completes when Redis answered, or when it gave up */
        CompletableFuture<Void> giveBack(ScriptCall.Held held);
    }

    private final String name;
    private final ScriptRunner runner;
    private final ReplicaWait replicaWait;
    private final ReplicaWait.Replication replication;
    private final GiveBack giveBack;

    /**
     * @param name        the semaphore, for the exception
     * @param runner      runs the call when no replica is waited for, and bounds the give-back
     * @param replicaWait runs the call, then {@code WAIT}, when replicas are waited for
     * @param replicas    how many replicas must acknowledge a grant; 0: none is waited for
     * @param timeout     how long {@code WAIT} waits for them
     * @param callbacks   where the failure is told, and the connection that waited is closed
     * @param giveBack    takes a grant they did not acknowledge out of Redis
     */
    public GrantRunner(String name, ScriptRunner runner, ReplicaWait replicaWait, int replicas, Duration timeout,
                       Executor callbacks, GiveBack giveBack) {
        this.name = name;
        this.runner = runner;
        this.replicaWait = replicaWait;
        this.replication = new ReplicaWait.Replication(replicas, timeout, callbacks);
        this.giveBack = giveBack;
    }

    /** @return whether a grant is acknowledged by replicas before its reply is handed on */
    public boolean waitsForReplicas() {
        return replication.replicas() > 0;
    }

    /** Sends {@code call}, without waiting for the reply; see the class documentation. */
    public <T> CompletableFuture<T> send(SemaphoreKeys keys, ScriptCall<T> call) {
        if (!waitsForReplicas()) {
            return runner.send(keys, call);
        }
        return replicaWait.send(keys, call, replication).thenCompose(replicated -> {
            T reply = replicated.reply();
            ScriptCall.Held held = call.held(reply);
            if (held == null || replicated.acknowledged() >= replication.replicas()) {
                return CompletableFuture.completedFuture(reply);
            }
            return giveBack.giveBack(held).copy()
                    .completeOnTimeout(null, runner.timeout().toNanos(), TimeUnit.NANOSECONDS)
                    .thenApplyAsync(ignored -> {
                        throw notReplicated(replicated.acknowledged());
                    }, replication.closer());
        });
    }

    private SemaphoreUnavailableException notReplicated(int acknowledged) {
        return new SemaphoreUnavailableException(name, Reason.NOT_REPLICATED, "A permit of semaphore '" + name
                + "' was granted, but only " + acknowledged + " of the " + replication.replicas()
                + " replicas required acknowledged it within " + replication.timeout().toMillis()
                + " ms; it was given back", null);
    }
}
