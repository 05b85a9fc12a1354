package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreListener;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.WhenUnavailable;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Fans events out to the registry's listeners; a failing listener never breaks the semaphore. */
final class Listeners implements SemaphoreListener {

    private static final Logger log = LoggerFactory.getLogger(Listeners.class);

    private final List<SemaphoreListener> listeners;

    Listeners(List<SemaphoreListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void acquisitionEnded(String semaphore, int permits, Outcome outcome, Duration elapsed) {
        each(l -> l.acquisitionEnded(semaphore, permits, outcome, elapsed));
    }

    @Override
    public void queued(String semaphore, int permits, int position, @Nullable Duration predictedWait) {
        each(l -> l.queued(semaphore, permits, position, predictedWait));
    }

    @Override
    public void delayedByRate(String semaphore, int permits) {
        each(l -> l.delayedByRate(semaphore, permits));
    }

    @Override
    public void rejected(String semaphore, int permits, SemaphoreRejectedException.Reason reason) {
        each(l -> l.rejected(semaphore, permits, reason));
    }

    @Override
    public void admittedWithoutRedis(String semaphore, int permits, WhenUnavailable mode) {
        each(l -> l.admittedWithoutRedis(semaphore, permits, mode));
    }

    @Override
    public void degradedModeChanged(String semaphore, boolean degraded) {
        each(l -> l.degradedModeChanged(semaphore, degraded));
    }

    @Override
    public void permitHeld(Permit permit) {
        each(l -> l.permitHeld(permit));
    }

    @Override
    public void permitEnded(Permit permit) {
        each(l -> l.permitEnded(permit));
    }

    @Override
    public void permitCountChanged(Permit permit) {
        each(l -> l.permitCountChanged(permit));
    }

    @Override
    public void leaseLost(Permit permit) {
        each(l -> l.leaseLost(permit));
    }

    @Override
    public void releaseDeferred(String semaphore) {
        each(l -> l.releaseDeferred(semaphore));
    }

    @Override
    public void leasesRenewed(String semaphore, int leases) {
        each(l -> l.leasesRenewed(semaphore, leases));
    }

    @Override
    public void usageReported(String semaphore, int limit, int used, int waiters) {
        each(l -> l.usageReported(semaphore, limit, used, waiters));
    }

    @Override
    public void totalUsageReported(String semaphore, int limit, int used, int waiters) {
        each(l -> l.totalUsageReported(semaphore, limit, used, waiters));
    }

    @Override
    public void semaphoreForgotten(String semaphore) {
        each(l -> l.semaphoreForgotten(semaphore));
    }

    private void each(Consumer<SemaphoreListener> event) {
        for (SemaphoreListener listener : listeners) {
            try {
                event.accept(listener);
            } catch (RuntimeException e) {
                log.warn("Semaphore listener {} failed", listener, e);
            }
        }
    }
}
