package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.CancelScript;
import io.github.redissemaphore.core.internal.redis.ReleaseScript;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.springframework.scheduling.TaskScheduler;

/**
 * The calls of one semaphore that go on in the background: those that must reach Redis
 * (clean-ups: a release, a cancel), sent without blocking a thread. On failure each is sent
 * again every {@link #RETRY}, and at once when Redis answers again ({@link Retries}, shared by
 * the registry's semaphores), for as long as the entry it is about could still be in Redis (its
 * lease or heartbeat, whichever is longer), and not after shutdown.
 */
final class BackgroundCalls {

    private static final Logger log = EngineLogs.SEMAPHORE;
    /** How often a clean-up that Redis did not answer is sent again. */
    private static final Duration RETRY = Duration.ofSeconds(1);

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final ReplyFigures figures;

    BackgroundCalls(SemaphoreIdentity identity, SemaphoreContext context, ReplyFigures figures) {
        this.identity = identity;
        this.context = context;
        this.figures = figures;
    }

    /** Releases the lease, which this JVM held and has stopped renewing, in the background. */
    CompletableFuture<Void> release(Lease lease) {
        return keepSending("release " + Ids.shown(lease.id()) + " of", Duration.ofNanos(lease.leaseNanos()),
                () -> context.runner().send(identity.keys(), ReleaseScript.own(identity.limit(), lease.id(), 0,
                        identity.inbox())), reply -> figures.takeIn(reply.usage()));
    }

    /** Gives back what lease {@code lease} holds beyond {@code keep}, in the background. */
    void releasePart(Lease lease, int keep) {
        keepSending("give back part of " + Ids.shown(lease.id()) + " of", Duration.ofNanos(lease.leaseNanos()),
                () -> context.runner().send(identity.keys(), ReleaseScript.own(identity.limit(), lease.id(), keep,
                        identity.inbox())), reply -> figures.takeIn(reply.usage()));
    }

    /**
     * Takes waiter or claim {@code id} out of Redis (giving back a grant it got meanwhile), without
     * blocking a thread, and again every second (and when Redis answers again) while Redis does not
     * answer, until the entry's own lease or heartbeat would have ended it anyway.
     */
    CompletableFuture<Void> cancel(String id, Duration leaseTime) {
        return keepSending("take " + Ids.shown(id) + " out of", leaseTime,
                () -> context.runner().send(identity.keys(), new CancelScript(identity.limit(), id, true)),
                reply -> figures.takeIn(reply.usage()));
    }

    /**
     * @param lease the lease of the entry
     * @return completes when Redis answered, or when it gave up
     */
    private <T> CompletableFuture<Void> keepSending(String what, Duration lease, Supplier<CompletableFuture<T>> call,
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

    /**
     * The calls of every semaphore of a registry that Redis did not answer and that are to be sent
     * again (the clean-ups: releases, cancels), each timed by the scheduler, and all sent at once the
     * moment Redis answers again ({@link #now}): what ended during an outage is gone from Redis with
     * the first exchange after it, not a retry period later.
     */
    static final class Retries {

        private final TaskScheduler scheduler;
        private final Set<Retry> due = ConcurrentHashMap.newKeySet();

        Retries(TaskScheduler scheduler) {
            this.scheduler = scheduler;
        }

        /**
         * Runs {@code attempt} (which must not block) after {@code delay}, or sooner if Redis answers
         * again meanwhile; once either way.
         *
         * @return false when the scheduler takes no more tasks (shutdown): {@code attempt} never runs
         */
        boolean after(Duration delay, Runnable attempt) {
            Retry retry = new Retry(attempt);
            due.add(retry);
            try {
                retry.timer = scheduler.schedule(retry::run, Instant.now().plus(delay));
                return true;
            } catch (RejectedExecutionException e) {
                due.remove(retry);
                return false;
            }
        }

        /** @return whether an attempt waits to run */
        boolean due() {
            return !due.isEmpty();
        }

        /** Redis answers again: every attempt due runs now, on the caller's thread. */
        void now() {
            List.copyOf(due).forEach(Retry::run);
        }

        /** One attempt, run by its timer or by {@link #now}, whichever comes first. */
        private final class Retry {

            private final Runnable attempt;
            private final AtomicBoolean ran = new AtomicBoolean();
            private volatile @Nullable ScheduledFuture<?> timer;

            Retry(Runnable attempt) {
                this.attempt = attempt;
            }

            void run() {
                if (ran.compareAndSet(false, true)) {
                    due.remove(this);
                    ScheduledFuture<?> scheduled = timer;
                    if (scheduled != null) {
                        scheduled.cancel(false);
                    }
                    attempt.run();
                }
            }
        }
    }
}
