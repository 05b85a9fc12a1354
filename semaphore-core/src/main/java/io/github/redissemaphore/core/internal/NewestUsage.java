package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.Usage;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Passes on the newest usage figures of one semaphore, without a lock on the reply path. Replies
 * of concurrent calls arrive in any order, and a gauge must not end on an older figure than it
 * has already shown: every reply offers its figures (the newest by Redis server time wins), and
 * whichever thread finds nobody publishing passes on the newest, again until nothing newer came
 * meanwhile. No thread ever waits for another.
 */
final class NewestUsage {

    private final AtomicReference<Usage> newest = new AtomicReference<>();
    private final AtomicBoolean publishing = new AtomicBoolean();
    /** Server time of the figures last passed on; written only by the publishing thread. */
    private volatile long publishedMicros = Long.MIN_VALUE;

    void offer(Usage usage, Consumer<Usage> sink) {
        newest.accumulateAndGet(usage, (current, offered) ->
                current == null || offered.serverMicros() > current.serverMicros() ? offered : current);
        // A thread that finds another publishing leaves: that one looks again after it is done, and
        // so sees what was offered meanwhile.
        while (Objects.requireNonNull(newest.get(), "offered above").serverMicros() > publishedMicros) {
            if (!publishing.compareAndSet(false, true)) {
                return;
            }
            try {
                Usage figures = Objects.requireNonNull(newest.get(), "offered above");
                if (figures.serverMicros() > publishedMicros) {
                    publishedMicros = figures.serverMicros();
                    sink.accept(figures);
                }
            } finally {
                publishing.set(false);
            }
        }
    }
}
