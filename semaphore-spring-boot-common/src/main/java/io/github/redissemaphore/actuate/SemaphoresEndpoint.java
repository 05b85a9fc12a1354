package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code semaphores} endpoint: the semaphores this JVM uses or has configured, with their
 * state in Redis (fleet-wide), one semaphore's holders, waiters and limits, and, once access to
 * the endpoint is unrestricted, forced release of a permit and a runtime limit every JVM follows.
 *
 * <p>Reading is allowed by default ({@link Access#READ_ONLY}); the delete and write operations
 * exist only with {@code management.endpoint.semaphores.access=unrestricted}. Only semaphores this JVM knows
 * (used here, or configured under {@code distributed-semaphore.semaphores}) can be addressed, so
 * the endpoint never creates a semaphore with settings the application would not use.
 */
@Endpoint(id = SemaphoresEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class SemaphoresEndpoint {

    /** The endpoint's id. */
    static final String ID = "semaphores";

    private final SemaphoreRegistry registry;
    private final Set<String> configuredNames;

    /**
     * @param registry        the semaphores of this JVM
     * @param configuredNames semaphores to list even before this JVM uses them
     */
    public SemaphoresEndpoint(SemaphoreRegistry registry, Collection<String> configuredNames) {
        this.registry = registry;
        this.configuredNames = Set.copyOf(configuredNames);
    }

    /** @return every semaphore this JVM uses or has configured, by name, with its figures */
    @ReadOperation
    public SemaphoresDescriptor semaphores() {
        Map<String, RedisSemaphore> known = new TreeMap<>();
        configuredNames.forEach(name -> known.put(name, null));
        registry.semaphores().forEach(semaphore -> known.put(semaphore.name(), semaphore));
        List<SemaphoreSummary> summaries = known.entrySet().stream()
                .map(entry -> entry.getValue() != null ? entry.getValue() : registry.semaphore(entry.getKey()))
                .map(semaphore -> SemaphoreSummary.of(semaphore.state()))
                .toList();
        return new SemaphoresDescriptor(summaries);
    }

    /**
     * @return the semaphore with its limits, holders and waiters in queue order, or null (404) if
     *         unknown here
     */
    @ReadOperation
    public @Nullable SemaphoreDescriptor semaphore(@Selector String name) {
        RedisSemaphore semaphore = find(name);
        return semaphore == null ? null : SemaphoreDescriptor.of(semaphore);
    }

    /**
     * Sets the semaphore's runtime limit in Redis, which every JVM follows from its next call on
     * ({@code {"limit": N}}), or clears it so each JVM's configured permits apply again
     * ({@code {"limit": null}}). Needs unrestricted access to the endpoint. The {@code "limit"} key
     * is required: a request without it (no body, a misspelt key) is refused by
     * {@link LimitRequestCheck} rather than taken for a clear.
     *
     * @param limit the new limit, 1..1,000,000, or null to clear it
     * @return the semaphore under its new limit
     * @throws InvalidEndpointRequestException (400) when {@code limit} is outside 1..1,000,000, or
     *         when the semaphore is unknown here (a write operation cannot answer 404)
     */
    @WriteOperation
    public SemaphoreDescriptor limit(@Selector String name,
                                     // Spring's own @Nullable too: Boot 3's endpoints read only that one
                                     // (else a null limit is refused as missing); Boot 4's read either
                                     @org.springframework.lang.Nullable @Nullable Integer limit) {
        if (limit != null && (limit < 1 || limit > SemaphoreSettings.MAX_PERMITS)) {
            String message = "limit must be between 1 and " + SemaphoreSettings.MAX_PERMITS + " (or null to clear it),"
                    + " but was " + limit;
            throw new InvalidEndpointRequestException(message, message);
        }
        RedisSemaphore semaphore = find(name);
        if (semaphore == null) {
            String message = "No semaphore '" + name + "' is used or configured in this application";
            throw new InvalidEndpointRequestException(message, message);
        }
        if (limit == null) {
            semaphore.clearLimitOverride();
        } else {
            semaphore.overrideLimit(limit);
        }
        return SemaphoreDescriptor.of(semaphore);
    }

    /**
     * Ends a lease, whichever JVM holds it: an operator's tool for a stuck holder. The holder finds
     * its permit lost at its next renewal. Needs unrestricted access to the endpoint.
     *
     * @return whether the permit was held until now; false too when the semaphore is unknown here
     */
    @DeleteOperation
    public ReleaseDescriptor release(@Selector String name, @Selector String permitId) {
        RedisSemaphore semaphore = find(name);
        return new ReleaseDescriptor(name, permitId, semaphore != null && forceRelease(semaphore, permitId));
    }

    /** @return false too when the semaphore is of an application's own registry that cannot force a release */
    private static boolean forceRelease(RedisSemaphore semaphore, String permitId) {
        try {
            return semaphore.forceRelease(permitId);
        } catch (UnsupportedOperationException e) {
            return false;
        }
    }

    private @Nullable RedisSemaphore find(String name) {
        for (RedisSemaphore semaphore : registry.semaphores()) {
            if (semaphore.name().equals(name)) {
                return semaphore;
            }
        }
        return configuredNames.contains(name) ? registry.semaphore(name) : null;
    }

    /** @param semaphores every known semaphore, by name */
    public record SemaphoresDescriptor(List<SemaphoreSummary> semaphores) implements OperationResponseBody {
    }

    /**
     * One semaphore in the list.
     *
     * @param name      the semaphore
     * @param limit     the permits every JVM grants up to now (a runtime limit, when one is set)
     * @param used      permits held, fleet-wide
     * @param available permits free
     * @param waiters   callers waiting, fleet-wide
     */
    public record SemaphoreSummary(String name, int limit, int used, int available, int waiters) {

        static SemaphoreSummary of(SemaphoreState state) {
            return new SemaphoreSummary(state.name(), state.limit(), state.used(), state.available(),
                    state.waiters().size());
        }
    }

    /**
     * One semaphore in detail.
     *
     * @param name                  the semaphore
     * @param limit                 the permits every JVM grants up to now (the effective limit)
     * @param configuredLimit       the permits this JVM is configured with
     * @param limitSource           {@code configured} (this JVM's own) or {@code override} (a runtime
     *                              limit set in Redis, followed by every JVM)
     * @param otherConfiguredLimits the permits other JVMs are configured with, when they differ
     *                              from this JVM's (seen while no runtime limit was set)
     * @param used                  permits held, fleet-wide
     * @param available             permits free
     * @param holders               the leases, across all JVMs
     * @param waiters               the callers waiting, in the order they will be served
     */
    public record SemaphoreDescriptor(String name, int limit, int configuredLimit, String limitSource,
                                      List<OtherLimitDescriptor> otherConfiguredLimits, int used, int available,
                                      List<HolderDescriptor> holders, List<WaiterDescriptor> waiters)
            implements OperationResponseBody {

        /** Reads the semaphore's state in Redis, then what this JVM learnt of other JVMs' limits. */
        static SemaphoreDescriptor of(RedisSemaphore semaphore) {
            SemaphoreState state = semaphore.state();
            List<OtherLimitDescriptor> others = semaphore.localState().otherConfiguredLimits().entrySet().stream()
                    .map(other -> new OtherLimitDescriptor(other.getKey(), other.getValue().toString()))
                    .toList();
            return new SemaphoreDescriptor(state.name(), state.limit(), state.configuredLimit(), state.limitSource(),
                    others, state.used(), state.available(),
                    state.holders().stream().map(HolderDescriptor::of).toList(),
                    state.waiters().stream().map(WaiterDescriptor::of).toList());
        }
    }

    /**
     * A limit another JVM is configured with for the semaphore.
     *
     * @param limit    its permits
     * @param lastSeen when a script reply last showed it, ISO-8601
     */
    public record OtherLimitDescriptor(int limit, String lastSeen) {
    }

    /**
     * One lease.
     *
     * @param permitId       its id, to force its release
     * @param count          permits it holds
     * @param fencingToken   its fencing token
     * @param owner          host/pid/thread that holds it
     * @param leaseRemaining time until it ends unless renewed, ISO-8601 (e.g. {@code PT28.5S})
     */
    public record HolderDescriptor(String permitId, int count, long fencingToken, String owner,
                                   String leaseRemaining) {

        static HolderDescriptor of(SemaphoreState.Holder holder) {
            return new HolderDescriptor(holder.permitId(), holder.count(), holder.fencingToken(), holder.owner(),
                    holder.leaseRemaining().toString());
        }
    }

    /**
     * One waiting caller.
     *
     * @param waiterId id its permit will have
     * @param count    permits it waits for
     * @param owner    host/pid/thread that waits
     */
    public record WaiterDescriptor(String waiterId, int count, String owner) {

        static WaiterDescriptor of(SemaphoreState.Waiter waiter) {
            return new WaiterDescriptor(waiter.waiterId(), waiter.count(), waiter.owner());
        }
    }

    /**
     * The outcome of a forced release.
     *
     * @param name     the semaphore
     * @param permitId the lease
     * @param released whether it was held until now
     */
    public record ReleaseDescriptor(String name, String permitId, boolean released) implements OperationResponseBody {
    }
}
