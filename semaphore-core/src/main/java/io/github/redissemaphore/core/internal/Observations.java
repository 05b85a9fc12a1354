package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreListener.Outcome;
import io.github.redissemaphore.core.observation.DefaultSemaphoreHoldObservationConvention;
import io.github.redissemaphore.core.observation.DefaultSemaphoreObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreHoldObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreObservationContext;
import io.github.redissemaphore.core.observation.SemaphoreObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.util.Locale;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the {@code semaphore.acquire} and {@code semaphore.hold} observations of one registry.
 * Neither is ever opened in scope, so nothing nests under them: the Redis commands an acquisition
 * sends, and the guarded method's own work, stay children of the caller's observation, beside them.
 * With {@link ObservationRegistry#NOOP} (no registry given) every call here is a no-op. A handler
 * that throws is logged and otherwise ignored, as a failing listener is: it must never keep a
 * permit from being given back.
 */
final class Observations {

    private static final Logger log = LoggerFactory.getLogger(Observations.class);

    private static final SemaphoreObservationConvention DEFAULT_ACQUIRE = new DefaultSemaphoreObservationConvention();
    private static final SemaphoreHoldObservationConvention DEFAULT_HOLD = new DefaultSemaphoreHoldObservationConvention();

    private final ObservationRegistry registry;
    private final @Nullable SemaphoreObservationConvention acquireConvention;
    private final @Nullable SemaphoreHoldObservationConvention holdConvention;

    /** @param acquireConvention, holdConvention the user's, or null for the defaults */
    Observations(ObservationRegistry registry, @Nullable SemaphoreObservationConvention acquireConvention,
                 @Nullable SemaphoreHoldObservationConvention holdConvention) {
        this.registry = registry == null ? ObservationRegistry.NOOP : registry;
        this.acquireConvention = acquireConvention;
        this.holdConvention = holdConvention;
    }

    /** @return the caller's current observation, parent of what the acquisition starts; null if none */
    @Nullable Observation current() {
        return registry.getCurrentObservation();
    }

    /**
     * @return {@code executor}, running each task in the scope of the observation current where it
     *         was handed over: a Redis call sent from there (a connection lent off the caller's
     *         thread) is then traced as the caller's child, as one sent on the caller's thread is
     */
    Executor inCallersObservation(Executor executor) {
        return task -> executor.execute(inCallersScope(task));
    }

    /**
     * @return {@code task}, run in the scope of the observation current now, wherever and whenever
     *         it runs: a Redis call that waits for a connection is traced as its caller's child
     */
    Runnable inCallersScope(Runnable task) {
        Observation caller = current();
        return caller == null ? task : () -> {
            try (Observation.Scope scope = caller.openScope()) {
                task.run();
            }
        };
    }

    /** Starts observing an acquisition, on the caller's thread. */
    Observation acquisition(SemaphoreIdentity semaphore, int permits) {
        return start(Observation.createNotStarted(acquireConvention, DEFAULT_ACQUIRE, () -> context(semaphore, permits),
                registry));
    }

    /** Ends it; only an {@code error} outcome marks the observation as failed. */
    static void acquisitionEnded(Observation observation, Outcome outcome, @Nullable Throwable error) {
        end(observation, outcome.name().toLowerCase(Locale.ROOT), outcome == Outcome.ERROR ? error : null);
    }

    /** Starts observing a lease, on whichever thread heard of the grant: its parent is the caller's. */
    Observation hold(SemaphoreIdentity semaphore, int permits, @Nullable Observation parent) {
        Observation hold = Observation.createNotStarted(holdConvention, DEFAULT_HOLD, () -> context(semaphore, permits),
                registry);
        if (parent != null) {
            hold.parentObservation(parent);
        }
        return start(hold);
    }

    /** @param outcome {@code released}, {@code lost} or {@code adopted} */
    static void holdEnded(Observation hold, String outcome) {
        end(hold, outcome, null);
    }

    private static Observation start(Observation observation) {
        try {
            return observation.start();
        } catch (RuntimeException e) {
            log.warn("An observation handler failed to start {}", observation, e);
            return Observation.NOOP;
        }
    }

    private static void end(Observation observation, String outcome, @Nullable Throwable error) {
        if (observation.getContext() instanceof SemaphoreObservationContext context) {
            context.outcome(outcome);
        }
        try {
            if (error != null) {
                observation.error(error);
            }
            observation.stop();
        } catch (RuntimeException e) {
            log.warn("An observation handler failed to stop {}", observation, e);
        }
    }

    private static SemaphoreObservationContext context(SemaphoreIdentity semaphore, int permits) {
        return new SemaphoreObservationContext(semaphore.name(), semaphore.baseName(), semaphore.key(), permits);
    }
}
