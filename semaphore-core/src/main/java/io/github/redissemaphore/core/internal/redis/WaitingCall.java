package io.github.redissemaphore.core.internal.redis;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * A call of {@link RedisConnections} made while no connection was open: sent, in its caller's
 * observation, once one is; not sent at all if its caller gave up meanwhile.
 */
final class WaitingCall {

    private final CompletableFuture<?> reply;
    private final Runnable send;
    private @Nullable Link target;

    WaitingCall(CompletableFuture<?> reply, UnaryOperator<Runnable> inCallersScope, Consumer<Link> sendOn) {
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
