package io.github.redissemaphore.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * This JVM's side of one semaphore, read from memory without a Redis call: what a health check,
 * metrics or an operator's view need. Read-only: a snapshot, taken when it was asked for. For the
 * fleet-wide state ask {@link RedisSemaphore#state()}.
 *
 * @param name                the semaphore name
 * @param permitsHeld         permits this JVM holds (a lease of n permits counts n)
 * @param waiters             callers of this JVM waiting for a permit
 * @param inboxSubscribed     whether grants for this semaphore's waiters reach this JVM as
 *                            messages; when false, its waiters are served by the renewal tick
 *                            (later, not lost)
 * @param renewalFailingSince when the oldest renewal that has not succeeded since was sent: it
 *                            failed, or was still unanswered when the next one was due; null
 *                            while renewals succeed. Leases held end a lease time after the last
 *                            renewal that succeeded.
 * @param shortestLease       the shortest lease of the permits this JVM holds (each has its own:
 *                            the semaphore's, the one of its call, or of its last extension);
 *                            null when it holds none
 * @param otherConfiguredLimits the permits other JVMs are configured with for this semaphore, as
 *                            the script replies told this JVM, each with when it was last seen:
 *                            empty while all agree, or while a runtime limit is set (a value
 *                            unseen for three leases, and at least three minutes, is dropped)
 * @param reportedUsage       the semaphore fleet-wide as the newest script reply told this JVM
 *                            (limit, permits held, callers waiting); null until the first reply
 * @param degraded            while the semaphore decides its calls without Redis (a degraded
 *                            mode, {@link SemaphoreSettings#whenUnavailable()}), what it does; null
 *                            while it works through Redis. {@code permitsHeld} counts the permits
 *                            Redis granted only
 */
public record LocalState(String name, int permitsHeld, int waiters, boolean inboxSubscribed,
                         @Nullable Instant renewalFailingSince, @Nullable Duration shortestLease,
                         SortedMap<Integer, Instant> otherConfiguredLimits, @Nullable ReportedUsage reportedUsage,
                         @Nullable Degraded degraded) {

    /**
     * The semaphore decides its calls without Redis, which a call found unreachable
     * ({@link SemaphoreSettings#whenUnavailable()} is {@link WhenUnavailable#LOCAL} or
     * {@link WhenUnavailable#ALLOW}).
     *
     * @param since            when it entered degraded mode
     * @param mode             what it does meanwhile
     * @param share            the permits this instance may grant on its own ({@code LOCAL}; 0 with {@code ALLOW})
     * @param localPermitsHeld the permits it granted on its own that are still held
     */
    public record Degraded(Instant since, WhenUnavailable mode, int share, int localPermitsHeld) {
    }

    /** A state of a semaphore that works through Redis. */
    public LocalState(String name, int permitsHeld, int waiters, boolean inboxSubscribed,
                      @Nullable Instant renewalFailingSince, @Nullable Duration shortestLease,
                      SortedMap<Integer, Instant> otherConfiguredLimits, @Nullable ReportedUsage reportedUsage) {
        this(name, permitsHeld, waiters, inboxSubscribed, renewalFailingSince, shortestLease, otherConfiguredLimits,
                reportedUsage, null);
    }

    /** Keeps a copy of {@code otherConfiguredLimits} that cannot be changed. */
    public LocalState {
        otherConfiguredLimits = Collections.unmodifiableSortedMap(new TreeMap<>(otherConfiguredLimits));
    }

    /** A state before any script reply told this JVM the semaphore's figures. */
    public LocalState(String name, int permitsHeld, int waiters, boolean inboxSubscribed,
                      @Nullable Instant renewalFailingSince, @Nullable Duration shortestLease,
                      SortedMap<Integer, Instant> otherConfiguredLimits) {
        this(name, permitsHeld, waiters, inboxSubscribed, renewalFailingSince, shortestLease, otherConfiguredLimits,
                null);
    }

    /** A state in which no other JVM is seen configured otherwise, before any script reply. */
    public LocalState(String name, int permitsHeld, int waiters, boolean inboxSubscribed,
                      @Nullable Instant renewalFailingSince, @Nullable Duration shortestLease) {
        this(name, permitsHeld, waiters, inboxSubscribed, renewalFailingSince, shortestLease, new TreeMap<>());
    }
}
