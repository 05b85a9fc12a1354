package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreState;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * How many callers each key of a cap has queued, read from Redis ({@link SemaphoreCap#state()})
 * every {@code interval} while the bursts run: now, and the most seen. What an operator sees in
 * the endpoint; the demo's limit checks count for themselves.
 */
final class CapQueues implements AutoCloseable {

    private final SemaphoreCap cap;
    private final Map<String, Integer> now = new ConcurrentHashMap<>();
    private final Map<String, Integer> most = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "demo-cap-queues");
        thread.setDaemon(true);
        return thread;
    });

    private CapQueues(SemaphoreCap cap) {
        this.cap = cap;
    }

    /** Starts reading every {@code interval} until closed. */
    static CapQueues watch(SemaphoreCap cap, Duration interval) {
        CapQueues queues = new CapQueues(cap);
        queues.timer.scheduleWithFixedDelay(queues::read, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return queues;
    }

    private void read() {
        try {
            Map<String, Integer> queued = new ConcurrentHashMap<>();
            for (SemaphoreState.Waiter waiter : cap.state().waiters()) {
                if (waiter.key() != null) {
                    queued.merge(waiter.key(), 1, Integer::sum);
                }
            }
            now.keySet().retainAll(queued.keySet());
            now.putAll(queued);
            queued.forEach((key, count) -> most.merge(key, count, Math::max));
        } catch (RuntimeException e) {
            // a figure to show, not a check: the next read may work
        }
    }

    /** @return callers of {@code key} queued at the last read */
    int now(String key) {
        return now.getOrDefault(key, 0);
    }

    /** @return the most callers of {@code key} seen queued at once */
    int most(String key) {
        return most.getOrDefault(key, 0);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
