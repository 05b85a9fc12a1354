package io.github.redissemaphore.sample.live;

import io.github.redissemaphore.sample.live.BurstFirer.BurstCounts;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What the live view shows, as {@code GET /live/state} answers it: the fleet, each semaphore's
 * state in Redis (fleet-wide) and the sample's own count of calls inside the guarded methods.
 *
 * @param instance         the instance that answered
 * @param instances        the fleet, by name
 * @param forceReleasePath where the page sends DELETE {@code /<name>/<permitId>} to force a release,
 *                         or null when that operation is not open (see {@link ForceReleaseAccess})
 * @param tenants          the tenants whose exports the page can fire
 * @param bursts           what came of the bursts this instance fired
 * @param semaphores       the semaphores, reports first
 * @param exportCap        the cap of all tenants' exports together, shown above the tenants; null
 *                         when the exports have no {@code total-permits}
 */
public record LiveState(@Nullable String instance, List<FleetMember> instances, @Nullable String forceReleasePath,
        List<String> tenants,
        BurstCounts bursts, List<SemaphoreView> semaphores, @Nullable CapView exportCap) {

    /**
     * The cap over all keys of a capped semaphore, as one read of Redis shows it.
     *
     * @param name        its base name
     * @param limit       permits all keys together are granted up to
     * @param used        permits held, all keys together
     * @param limitSource {@code configured} or {@code override} (a runtime limit)
     * @param segments    one per permit held, in the order of the holders: whose key and which instance
     * @param keys        each key that holds or waits
     */
    public record CapView(String name, int limit, int used, String limitSource, List<CapSegment> segments,
            List<CapKeyView> keys) {
    }

    /**
     * One permit of a cap that is held.
     *
     * @param key      the key that holds it
     * @param instance the fleet member that holds it, or null if none
     */
    public record CapSegment(String key, @Nullable String instance) {
    }

    /**
     * One key of a cap.
     *
     * @param key     the key ({@code acme})
     * @param used    permits it holds
     * @param waiters its callers waiting
     */
    public record CapKeyView(String key, int used, int waiters) {
    }

    /**
     * One semaphore.
     *
     * @param name     its name
     * @param limit    its permits
     * @param used     permits held, fleet-wide
     * @param inFlight calls inside the guarded method now, fleet-wide, as the sample counts them
     *                 itself ({@code InFlightCounter}), not as the library reports them
     * @param holders  the leases
     * @param waiters  the callers waiting, in the order they will be served
     * @param maxWaiters its queue's bound ({@code max-waiters}), 0 when it has none: the page marks
     *                 the queue full when that many wait, as new callers are then refused at once
     * @param rateLimit its {@code rate-limit}, 0 when it has none
     * @param ratePeriodMillis its {@code rate-period}, 0 when it has no rate
     * @param rateGrants the grants of its last {@code rate-period}, fleet-wide, as Redis holds them (0 without a rate)
     */
    public record SemaphoreView(String name, int limit, int used, long inFlight, List<HolderView> holders,
            List<WaiterView> waiters, int maxWaiters, int rateLimit, long ratePeriodMillis, int rateGrants) {
    }

    /**
     * One lease.
     *
     * @param permitId             its id, for a forced release
     * @param count                permits it holds
     * @param fencingToken         its fencing token (a string: it may exceed what a JavaScript number holds exactly)
     * @param owner                host/pid/thread as the library recorded it
     * @param instance             the fleet member that owner belongs to, or null if none
     * @param leaseRemainingMillis time until the lease ends unless renewed
     */
    public record HolderView(String permitId, int count, String fencingToken, String owner, @Nullable String instance,
            long leaseRemainingMillis) {
    }

    /**
     * One waiting caller. How long it has waited is not in Redis (the queue orders by ticket, not
     * time), so the page measures it from when it first saw the waiter.
     *
     * @param waiterId the id its permit will have
     * @param count    permits it waits for
     * @param owner    host/pid/thread as the library recorded it
     * @param instance the fleet member that owner belongs to, or null if none
     * @param predictedWaitMillis the wait the library predicts for it from now, or null while none is known
     */
    public record WaiterView(String waiterId, int count, String owner, @Nullable String instance,
            @Nullable Long predictedWaitMillis) {
    }
}
