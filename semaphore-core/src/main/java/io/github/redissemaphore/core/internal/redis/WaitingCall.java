package io.github.redissemaphore.core.internal.redis;

import java.util.Comparator;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * A call of {@link RedisConnections} made while no connection was open (or refused with
 * {@code READONLY}, to be sent again): sent, in its caller's observation, once one is; not sent
 * at all if its caller gave up meanwhile. Calls wait in the order they were made ({@link #IN_ORDER}).
 */
final class WaitingCall {

    /** The order the calls were made in: a call refused with READONLY goes back in line where it was. */
    static final Comparator<WaitingCall> IN_ORDER = Comparator.comparingLong(call -> call.order);

    /** Its place in line: calls are numbered as they are made ({@link CallLine}). */
    private final long order;
    private final CompletableFuture<?> reply;
    private final Runnable send;
    private @Nullable Link target;

    /**
     * @param order its place in line (calls are sent in the order they were made)
     */
    WaitingCall(long order, CompletableFuture<?> reply, UnaryOperator<Runnable> inCallersScope,
                Consumer<Link> sendOn) {
        this.order = order;
        this.reply = reply;
        this.send = inCallersScope.apply(() -> sendOn.accept(Objects.requireNonNull(target, "target")));
    }

    /** @return whether the caller gave up: it is not sent at all */
    boolean givenUp() {
        return reply.isDone();
    }

    /** Sends the call on {@code open}, unless its caller gave up. */
    void sendOn(Link open) {
        if (!givenUp()) {
            target = open;
            send.run();
        }
    }

    /** Fails the call: it will never be sent. */
    void fail(RuntimeException failure) {
        reply.completeExceptionally(failure);
    }
}
