package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.CancelScript;
import io.github.redissemaphore.core.internal.redis.ReleaseScript;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.slf4j.Logger;

/**
 * Sends the calls of one semaphore that must reach Redis (clean-ups: a release, a cancel) in the
 * background, never blocking a thread: on failure each is sent again every {@link #RETRY}, and at
 * once when Redis answers again ({@link Retries}), for as long as the entry it is about could
 * still be in Redis (its lease or heartbeat, whichever is longer), and not after shutdown.
 */
final class CleanUps {

    private static final Logger log = EngineLogs.SEMAPHORE;
    /** How often a clean-up that Redis did not answer is sent again. */
    private static final Duration RETRY = Duration.ofSeconds(1);

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final UsageFigures figures;

    CleanUps(SemaphoreIdentity identity, SemaphoreContext context, UsageFigures figures) {
        this.identity = identity;
        this.context = context;
        this.figures = figures;
    }

    /** Releases the lease, which this JVM held and has stopped renewing, in the background. */
    CompletableFuture<Void> release(Lease lease) {
        return persist("release " + Ids.shown(lease.id()) + " of", Duration.ofNanos(lease.leaseNanos()),
                () -> context.runner().send(identity.keys(), ReleaseScript.own(identity.limit(), lease.id(), 0,
                        identity.inbox())), reply -> figures.seen(reply.usage()));
    }

    /** Gives back what lease {@code lease} holds beyond {@code keep}, in the background. */
    void releasePart(Lease lease, int keep) {
        persist("give back part of " + Ids.shown(lease.id()) + " of", Duration.ofNanos(lease.leaseNanos()),
                () -> context.runner().send(identity.keys(), ReleaseScript.own(identity.limit(), lease.id(), keep,
                        identity.inbox())), reply -> figures.seen(reply.usage()));
    }

    /**
     * Takes waiter or claim {@code id} out of Redis (giving back a grant it got meanwhile), without
     * blocking a thread, and again every second (and when Redis answers again) while Redis does not
     * answer, until the entry's own lease or heartbeat would have ended it anyway.
     */
    CompletableFuture<Void> cancel(String id, Duration leaseTime) {
        return persist("take " + Ids.shown(id) + " out of", leaseTime,
                () -> context.runner().send(identity.keys(), new CancelScript(identity.limit(), id, true)),
                reply -> figures.seen(reply.usage()));
    }

    /**
     * @param lease the lease of the entry
     * @return completes when Redis answered, or when it gave up
     */
    private <T> CompletableFuture<Void> persist(String what, Duration lease, Supplier<CompletableFuture<T>> call,
                                        Consumer<T> onReply) {
        long untilNanos = System.nanoTime() + Math.max(lease.toNanos(), context.waiterHeartbeat().toNanos());
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable[] attempt = new Runnable[1];
        attempt[0] = () -> call.get().whenCompleteAsync((reply, error) -> {
            if (error == null) {
                onReply.accept(reply);
                done.complete(null);
            } else if (System.nanoTime() - untilNanos < 0 && !context.isClosed()) {
                if (!context.retries().after(RETRY, attempt[0])) {
                    done.complete(null);
                }
            } else {
                log.debug("Could not {} semaphore '{}'; it ends with its lease or heartbeat", what, identity.name(),
                        error);
                done.complete(null);
            }
        }, context.callbacks());
        attempt[0].run();
        return done;
    }
}
