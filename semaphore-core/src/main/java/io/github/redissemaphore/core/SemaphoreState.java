package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one semaphore as Redis holds it.
 *
 * @param name            the semaphore name
 * @param limit           the number of permits every JVM grants up to now: the runtime limit an
 *                        operator set ({@link RedisSemaphore#overrideLimit(int)}), else this JVM's
 *                        configured one
 * @param used            permits held now (above {@code limit} for a while after it was lowered:
 *                        held permits are never taken back)
 * @param available       permits free now
 * @param holders         the leases, across all JVMs
 * @param waiters         the callers waiting, in the order they will be served
 * @param configuredLimit the permits this JVM is configured with ({@link SemaphoreSettings#permits()})
 * @param limitSource     where {@code limit} comes from: {@value #CONFIGURED} or {@value #OVERRIDE}
 * @param total           of a key of a capped semaphore ({@link SemaphoreSettings#totalPermits()}),
 *                        the cap over all its keys; else null. (The state of the cap itself,
 *                        {@link SemaphoreCap#state()}, has none: its own figures are the cap's.)
 * @param rateWindow      of a semaphore with a rate ({@link SemaphoreSettings#rateLimit()}), the
 *                        window's use now; else null
 */
public record SemaphoreState(String name, int limit, int used, int available,
                             List<Holder> holders, List<Waiter> waiters, int configuredLimit, String limitSource,
                             @Nullable Total total, @Nullable RateWindow rateWindow) {

    /** {@link #limitSource()} of a limit that is this JVM's configured one. */
    public static final String CONFIGURED = "configured";
    /** {@link #limitSource()} of a runtime limit set in Redis, which every JVM follows until it is cleared. */
    public static final String OVERRIDE = "override";

    public SemaphoreState {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
        if (!CONFIGURED.equals(limitSource) && !OVERRIDE.equals(limitSource)) {
            throw new IllegalArgumentException("limitSource must be '" + CONFIGURED + "' or '" + OVERRIDE
                    + "', but was " + limitSource);
        }
    }

    /** A state of a semaphore without a rate. */
    public SemaphoreState(String name, int limit, int used, int available, List<Holder> holders, List<Waiter> waiters,
                          int configuredLimit, String limitSource, @Nullable Total total) {
        this(name, limit, used, available, holders, waiters, configuredLimit, limitSource, total, null);
    }

    /**
     * The window of a semaphore with a rate, as Redis holds it now.
     *
     * @param grants         grants in the last {@code ratePeriod}, fleet-wide
     * @param untilSlotFrees how long until the window frees a slot; zero when one is free now
     * @param rateLimit      the grants per {@code ratePeriod} in force: the runtime rate while one is
     *                       set ({@link RedisSemaphore#overrideRateLimit}), else the caller's configured one
     * @param ratePeriod     the window in force
     * @param overridden     whether a runtime rate is set
     */
    public record RateWindow(int grants, Duration untilSlotFrees, int rateLimit, Duration ratePeriod,
                             boolean overridden) {

        /** A window whose rate is not told (0 and {@link Duration#ZERO}), not overridden. */
        public RateWindow(int grants, Duration untilSlotFrees) {
            this(grants, untilSlotFrees, 0, Duration.ZERO, false);
        }
    }

    /** A state of a semaphore without a cap. */
    public SemaphoreState(String name, int limit, int used, int available, List<Holder> holders, List<Waiter> waiters,
                          int configuredLimit, String limitSource) {
        this(name, limit, used, available, holders, waiters, configuredLimit, limitSource, null);
    }

    /** A state whose limit is the configured one. */
    public SemaphoreState(String name, int limit, int used, int available, List<Holder> holders, List<Waiter> waiters) {
        this(name, limit, used, available, holders, waiters, limit, CONFIGURED);
    }

    /**
     * One lease.
     *
     * @param permitId       the {@link Permit#id()}
     * @param count          permits it holds
     * @param fencingToken   its fencing token
     * @param owner          host/pid/thread of the JVM that holds it
     * @param leaseRemaining time until the lease ends unless renewed
     * @param key            of a capped semaphore (its {@link SemaphoreCap#state()} or a key's
     *                       state), the key the lease holds permits of; else null
     */
    public record Holder(String permitId, int count, long fencingToken, String owner, Duration leaseRemaining,
                         @Nullable String key) {

        /** A lease of one semaphore. */
        public Holder(String permitId, int count, long fencingToken, String owner, Duration leaseRemaining) {
            this(permitId, count, fencingToken, owner, leaseRemaining, null);
        }
    }

    /**
     * One waiting caller.
     *
     * @param waiterId id the permit will have once granted
     * @param count    permits it waits for
     * @param owner    host/pid/thread of the JVM that waits
     * @param key      of a capped semaphore, the key it waits on; else null
     * @param position its place in the queue (of its key), 1 for the next served; 0 when not told
     * @param predictedWait how long it is predicted to wait from now: its place times the average
     *                 hold of the semaphore, over the permits (see
     *                 {@link SemaphoreSettings#rejectPredictedTimeouts()}); null before a hold was
     *                 measured, and in the state of a cap as a whole
     */
    public record Waiter(String waiterId, int count, String owner, @Nullable String key, int position,
                         @Nullable Duration predictedWait) {

        /** A caller whose place and predicted wait are not told. */
        public Waiter(String waiterId, int count, String owner, @Nullable String key) {
            this(waiterId, count, owner, key, 0, null);
        }

        /** A caller waiting on one semaphore. */
        public Waiter(String waiterId, int count, String owner) {
            this(waiterId, count, owner, null);
        }
    }

    /**
     * The cap over all keys of a capped semaphore, as a call about one of its keys saw it.
     *
     * @param name        the base name of the keys ({@code "exports"})
     * @param limit       permits all keys together are granted up to now: the cap's runtime limit,
     *                    else this JVM's {@link SemaphoreSettings#totalPermits()}
     * @param used        permits held, all keys together
     * @param available   permits of the cap free now
     * @param waiters     callers waiting, all keys together
     * @param limitSource where {@code limit} comes from: {@value #CONFIGURED} or {@value #OVERRIDE}
     */
    public record Total(String name, int limit, int used, int available, int waiters, String limitSource) {
    }
}
