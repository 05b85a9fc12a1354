package io.github.redissemaphore.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * The calls of every semaphore of a registry that Redis did not answer and that are to be sent
 * again (the clean-ups: releases, cancels), each timed by the scheduler, and all sent at once the
 * moment Redis answers again ({@link #now}): what ended during an outage is gone from Redis with
 * the first exchange after it, not a retry period later.
 */
final class Retries {

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
