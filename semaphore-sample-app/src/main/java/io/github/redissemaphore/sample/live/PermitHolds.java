package io.github.redissemaphore.sample.live;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Takes a permit and keeps it for a while, as a slow caller would: a holder that stays on the
 * page long enough to watch its lease being renewed, to see the queue wait behind it, and to
 * force-release it. The permit is asked for without blocking a thread (it may have to queue like
 * any caller, up to the semaphore's wait time); the library records the asking request thread as
 * its owner, so the page attributes it to this instance.
 */
@Component
public class PermitHolds implements DisposableBean {

    private final SemaphoreRegistry registry;
    private final ScheduledExecutorService releases = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "live-view-holds");
        thread.setDaemon(true);
        return thread;
    });

    public PermitHolds(SemaphoreRegistry registry) {
        this.registry = registry;
    }

    /**
     * Asks for one permit of {@code semaphore} and releases it {@code duration} after it was granted.
     *
     * @return the permit once granted; fails with the library's {@code SemaphoreRejectedException}
     *         when none came within the semaphore's wait time
     */
    public CompletableFuture<Permit> hold(String semaphore, Duration duration) {
        RedisSemaphore target = registry.semaphore(semaphore);
        return target.acquireAsync(1, target.settings().waitTime()).thenApply(permit -> {
            releases.schedule(() -> permit.release(), duration.toMillis(), TimeUnit.MILLISECONDS);
            return permit;
        });
    }

    /** Permits still held are released by the registry as it closes. */
    @Override
    public void destroy() {
        releases.shutdownNow();
    }
}
