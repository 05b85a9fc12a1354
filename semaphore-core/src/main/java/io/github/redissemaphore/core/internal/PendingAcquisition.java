package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A caller in the queue. Several parties may try to end the wait at once (the grant message, the
 * renewal tick, the deadline, an interrupt, shutdown); {@link #decide()} lets exactly one of them
 * do it.
 */
final class PendingAcquisition {

    final String id;
    final int count;
    final Duration maxWait;
    final long startNanos;
    final CompletableFuture<Permit> future = new CompletableFuture<>();
    private final AtomicBoolean decided = new AtomicBoolean();
    private volatile ScheduledFuture<?> deadline;
    /** Set once Redis confirmed the queue entry: only then may a tick ask about it. */
    private volatile boolean queued;

    PendingAcquisition(String id, int count, Duration maxWait, long startNanos) {
        this.id = id;
        this.count = count;
        this.maxWait = maxWait;
        this.startNanos = startNanos;
    }

    /** @return true for exactly one caller: the one that now ends this wait */
    boolean decide() {
        boolean won = decided.compareAndSet(false, true);
        if (won && deadline != null) {
            deadline.cancel(false);
        }
        return won;
    }

    void queued() {
        queued = true;
    }

    /** @return whether Redis has confirmed the queue entry and nobody has ended the wait yet */
    boolean isQueued() {
        return queued && !decided.get();
    }

    void deadline(ScheduledFuture<?> deadline) {
        this.deadline = deadline;
        if (decided.get()) {
            deadline.cancel(false);
        }
    }

    Duration waited() {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }
}
