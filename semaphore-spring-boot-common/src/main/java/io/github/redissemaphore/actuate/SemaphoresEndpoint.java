package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreLookup;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonIncludeProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.convert.DurationStyle;

/**
 * The {@code semaphores} endpoint: the semaphores this JVM uses or has configured, with their
 * state in Redis (fleet-wide), one semaphore's holders, waiters and limits, and, once access to
 * the endpoint is unrestricted, forced release of a permit and a runtime limit every JVM follows.
 *
 * <p>Reading is allowed by default ({@link Access#READ_ONLY}); the delete and write operations
 * exist only with {@code management.endpoint.semaphores.access=unrestricted}. Only semaphores this JVM knows
 * (used here, or configured under {@code distributed-semaphore.semaphores}) can be addressed, so
 * the endpoint never creates a semaphore with settings the application would not use.
 *
 * <p>A capped semaphore ({@code total-permits}) is addressed two ways: by its base name
 * ({@code exports}), the cap over all its keys, with each key beneath it and a runtime cap
 * ({@code {"totalLimit": N}}); and by a key's name ({@code exports:acme}), that key alone, with
 * its own runtime limit ({@code {"limit": N}}). Any key of a configured cap can be addressed, as
 * the cap shows the keys every JVM uses, not only this one's.
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
        // read one by one below, after the names are collected: each state is a Redis call
        Map<String, Supplier<SemaphoreState>> known = new TreeMap<>();
        for (String name : configuredNames) {
            SemaphoreLookup lookup = lookup(name);
            if (lookup instanceof SemaphoreLookup.Capped capped) {
                known.put(name, capped.cap()::state);
            } else if (lookup instanceof SemaphoreLookup.Found found) {
                known.put(name, found.semaphore()::state);
            }
        }
        registry.semaphores().forEach(semaphore -> known.put(semaphore.name(), semaphore::state));
        return new SemaphoresDescriptor(known.values().stream().map(state -> new SemaphoreSummary(state.get()))
                .toList());
    }

    /**
     * @return the semaphore with its limits, holders and waiters in queue order; for the base name
     *         of a capped semaphore its cap with the keys beneath it ({@link CapDescriptor}); null
     *         (404) if unknown here
     */
    @ReadOperation
    public @Nullable SemaphoreView semaphore(@Selector String name) {
        SemaphoreLookup lookup = lookup(name);
        if (lookup instanceof SemaphoreLookup.Capped capped) {
            return CapDescriptor.of(capped.cap());
        }
        return lookup instanceof SemaphoreLookup.Found found ? SemaphoreDescriptor.of(found.semaphore()) : null;
    }

    /**
     * Sets the semaphore's runtime limit in Redis, which every JVM follows from its next call on
     * ({@code {"limit": N}}), or clears it so each JVM's configured permits apply again
     * ({@code {"limit": null}}); for the base name of a capped semaphore, the cap over all its keys
     * likewise ({@code {"totalLimit": N}}, {@code {"totalLimit": null}}). Needs unrestricted access
     * to the endpoint. The key that fits the name is required: a request without it (no body, a
     * misspelt key, the other key) is refused by {@link LimitRequestCheck} rather than taken for a
     * clear.
     *
     * <p>The rate of a semaphore with one likewise: {@code {"rateLimit": N, "ratePeriod": "1m"}}
     * sets the runtime rate every JVM follows ({@link RedisSemaphore#overrideRateLimit}),
     * {@code {"rateLimit": 0}} clears it (0: no runtime rate, as {@code rate-limit} 0 is no rate; a
     * null could not be told from a request without the key). A request with {@code rateLimit}
     * needs no {@code limit} and leaves the permits' limit as it is, unless it sets one too.
     *
     * @param limit      the new limit of a semaphore or of one key, 1..1,000,000, or null to clear it
     * @param totalLimit the new cap of all keys of a capped semaphore, 1..1,000,000, or null to clear it
     * @param rateLimit  the new runtime rate, grants per {@code ratePeriod}, 1..100,000, or 0 to
     *                   clear it; null (absent): the request is not about the rate
     * @param ratePeriod the window of {@code rateLimit}, as the {@code rate-period} property is
     *                   written ({@code 1m}, {@code 500ms}, {@code PT1M}; plain digits are ms),
     *                   100 ms..24 h; required with a {@code rateLimit}
     * @return the semaphore, or the cap, under its new limit
     * @throws InvalidEndpointRequestException (400) when the limit is outside 1..1,000,000, when
     *         the name does not take that limit, or when the semaphore is unknown here (a write
     *         operation cannot answer 404); when the rate is out of range, its period missing or
     *         unreadable, or the semaphore has no rate
     */
    @WriteOperation
    public SemaphoreView limit(@Selector String name,
                               // Spring's own @Nullable too: Boot 3's endpoints read only that one
                               // (else a null limit is refused as missing); Boot 4's read either
                               @org.springframework.lang.Nullable @Nullable Integer limit,
                               @org.springframework.lang.Nullable @Nullable Integer totalLimit,
                               @org.springframework.lang.Nullable @Nullable Integer rateLimit,
                               @org.springframework.lang.Nullable @Nullable String ratePeriod) {
        SemaphoreLookup lookup = lookup(name);
        if (lookup instanceof SemaphoreLookup.Capped capped) {
            SemaphoreCap cap = capped.cap();
            if (rateLimit != null || ratePeriod != null) {
                throw badRequest("Semaphore '" + name + "' is capped (total-permits), which takes no rate: send"
                        + " {\"totalLimit\": N}");
            }
            if (limit != null) {
                throw badRequest(LimitRequestCheck.capTakesTotalLimit(name));
            }
            checkRange(LimitRequestCheck.TOTAL_LIMIT, totalLimit);
            if (totalLimit == null) {
                cap.clearLimitOverride();
            } else {
                cap.overrideLimit(totalLimit);
            }
            return CapDescriptor.of(cap);
        }
        if (totalLimit != null) {
            throw badRequest(LimitRequestCheck.noCap(name));
        }
        checkRange(LimitRequestCheck.LIMIT, limit);
        if (!(lookup instanceof SemaphoreLookup.Found found)) {
            throw badRequest("No semaphore '" + name + "' is used or configured in this application");
        }
        RedisSemaphore semaphore = found.semaphore();
        // A request about the rate leaves the permits' limit as it is unless it sets one: Boot hands
        // an absent "limit" over as null, which here must not mean a clear (LimitRequestCheck let it
        // through without "limit" because it has "rateLimit").
        boolean aboutRate = rateLimit != null || ratePeriod != null;
        Duration period = aboutRate ? checkRate(name, semaphore, rateLimit, ratePeriod) : null;
        if (limit != null) {
            semaphore.overrideLimit(limit);
        } else if (!aboutRate) {
            semaphore.clearLimitOverride();
        }
        if (period != null && rateLimit != null) {
            semaphore.overrideRateLimit(rateLimit, period);
        } else if (aboutRate) {
            semaphore.clearRateLimitOverride();
        }
        return SemaphoreDescriptor.of(semaphore);
    }

    /**
     * @return the period of a runtime rate to set, or null for {@code rateLimit} 0: clear it
     * @throws InvalidEndpointRequestException when the rate is out of range, its period missing or
     *         unreadable, or the semaphore has no rate configured here
     */
    private static @Nullable Duration checkRate(String name, RedisSemaphore semaphore, @Nullable Integer rateLimit,
                                                @Nullable String ratePeriod) {
        if (semaphore.settings().rateLimit() == 0) {
            throw badRequest("Semaphore '" + name + "' has no rate-limit configured, so it has no rate to override");
        }
        if (rateLimit == null) {
            throw badRequest(LimitRequestCheck.RATE_LIMIT + " is required with " + LimitRequestCheck.RATE_PERIOD + ": "
                    + LimitRequestCheck.WHAT_TO_SEND_FOR_RATE);
        }
        if (rateLimit == 0) {
            if (ratePeriod != null) {
                throw badRequest(LimitRequestCheck.RATE_PERIOD + " must not come with rateLimit 0 (a clear)");
            }
            return null;
        }
        if (rateLimit < 1 || rateLimit > SemaphoreSettings.MAX_RATE_LIMIT) {
            throw badRequest(LimitRequestCheck.RATE_LIMIT + " must be between 1 and " + SemaphoreSettings.MAX_RATE_LIMIT
                    + " (or 0 to clear it), but was " + rateLimit);
        }
        if (ratePeriod == null) {
            throw badRequest(LimitRequestCheck.RATE_PERIOD + " is required with " + LimitRequestCheck.RATE_LIMIT + " "
                    + rateLimit + ": " + LimitRequestCheck.WHAT_TO_SEND_FOR_RATE);
        }
        Duration period;
        try {
            period = DurationStyle.detectAndParse(ratePeriod.trim());
        } catch (IllegalArgumentException e) {
            throw badRequest(LimitRequestCheck.RATE_PERIOD + " must be a duration such as 1m, 500ms or PT1M, but was '"
                    + ratePeriod + "'");
        }
        if (period.toMillis() < SemaphoreSettings.MIN_RATE_PERIOD_MILLIS || period.compareTo(Duration.ofDays(1)) > 0) {
            throw badRequest(LimitRequestCheck.RATE_PERIOD + " must be between " + SemaphoreSettings.MIN_RATE_PERIOD_MILLIS
                    + " ms and 24 h, but was " + period.toMillis() + " ms");
        }
        return period;
    }

    private static void checkRange(String parameter, @Nullable Integer limit) {
        if (limit != null && (limit < 1 || limit > SemaphoreSettings.MAX_PERMITS)) {
            throw badRequest(parameter + " must be between 1 and " + SemaphoreSettings.MAX_PERMITS
                    + " (or null to clear it), but was " + limit);
        }
    }

    private static InvalidEndpointRequestException badRequest(String message) {
        return new InvalidEndpointRequestException(message, message);
    }

    /**
     * @return whether {@code name} is the base name of a capped semaphore this application
     *         configures: the endpoint shows its cap and takes {@code totalLimit} for it
     */
    public boolean isCap(String name) {
        return lookup(name) instanceof SemaphoreLookup.Capped;
    }

    /**
     * Ends a lease, whichever JVM holds it: an operator's tool for a stuck holder. The holder finds
     * its permit lost at its next renewal. Needs unrestricted access to the endpoint.
     *
     * @return whether the permit was held until now; false too when the semaphore is unknown here
     */
    @DeleteOperation
    public ReleaseDescriptor release(@Selector String name, @Selector String permitId) {
        SemaphoreLookup lookup = lookup(name);
        RedisSemaphore semaphore = lookup instanceof SemaphoreLookup.Found found ? found.semaphore() : null;
        if (lookup instanceof SemaphoreLookup.Capped capped) {
            // the cap view lists every key's holders: the permit is released on the key that holds it
            SemaphoreCap cap = capped.cap();
            semaphore = cap.state().holders().stream()
                    .filter(holder -> holder.permitId().equals(permitId))
                    .map(SemaphoreState.Holder::key).filter(Objects::nonNull)
                    .findFirst().map(cap::semaphore).orElse(null);
        }
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

    /**
     * @return what the name stands for, as the registry reads it (a semaphore used here or
     *         configured, a configured cap, or a key of one); a name configured in the
     *         application's properties that an application's own registry does not know is a
     *         semaphore too; else unknown
     */
    private SemaphoreLookup lookup(String name) {
        SemaphoreLookup lookup = registry.lookup(name);
        return lookup instanceof SemaphoreLookup.Unknown && configuredNames.contains(name)
                ? new SemaphoreLookup.Found(registry.semaphore(name)) : lookup;
    }

    /**
     * What reading or limiting one name answers: a semaphore ({@link SemaphoreDescriptor}), or the
     * cap of a capped semaphore's keys ({@link CapDescriptor}).
     */
    public sealed interface SemaphoreView extends OperationResponseBody permits SemaphoreDescriptor, CapDescriptor {
    }

    /** @param semaphores every known semaphore, by name (a cap by its base name, with the figures of all its keys) */
    public record SemaphoresDescriptor(List<SemaphoreSummary> semaphores) implements OperationResponseBody {
    }

    /**
     * One semaphore in the list: the {@code name}, {@code limit}, {@code used} and {@code available}
     * of its state, and how many wait. Views name what they show, so a component the core adds
     * later stays out of the JSON until chosen here.
     *
     * @param state the semaphore in Redis
     */
    public record SemaphoreSummary(@JsonUnwrapped @JsonIncludeProperties({"name", "limit", "used", "available"})
                                   SemaphoreState state) {

        /** @return callers waiting, fleet-wide */
        @JsonProperty("waiters")
        public int waiting() {
            return state.waiters().size();
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
     * @param total                 of a key of a capped semaphore, the cap over all its keys; left
     *                              out otherwise
     * @param rate                  of a semaphore with a rate, its window's use; left out otherwise
     */
    public record SemaphoreDescriptor(String name, int limit, int configuredLimit, String limitSource,
                                      List<OtherLimitDescriptor> otherConfiguredLimits, int used, int available,
                                      List<HolderDescriptor> holders, List<WaiterDescriptor> waiters,
                                      @JsonInclude(JsonInclude.Include.NON_NULL) SemaphoreState.@Nullable Total total,
                                      @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable RateDescriptor rate)
            implements SemaphoreView {

        /** Reads the state in Redis, then this JVM's. Not a view: its members have an order of their own. */
        static SemaphoreDescriptor of(RedisSemaphore semaphore) {
            SemaphoreState state = semaphore.state();
            return new SemaphoreDescriptor(state.name(), state.limit(), state.configuredLimit(), state.limitSource(),
                    OtherLimitDescriptor.of(semaphore.localState().otherConfiguredLimits()), state.used(),
                    state.available(), state.holders().stream().map(HolderDescriptor::new).toList(),
                    state.waiters().stream().map(WaiterDescriptor::new).toList(), state.total(),
                    RateDescriptor.of(semaphore, state));
        }
    }

    /**
     * The rate of a semaphore and its window's use now.
     *
     * @param rateLimit             grants allowed in any window of {@code ratePeriodMillis}, fleet-wide,
     *                              now: the runtime rate while one is set, else this JVM's
     * @param ratePeriodMillis      the window in force
     * @param grantsInWindow        grants made in the last window
     * @param untilSlotFreesMillis  how long until the window frees a slot (0: one is free now)
     * @param configuredRateLimit   this JVM's {@code rate-limit}
     * @param configuredRatePeriodMillis this JVM's {@code rate-period}
     * @param rateSource            {@code configured} (the rate in force is the configured one) or
     *                              {@code override} (a runtime rate set in Redis, followed by every JVM)
     */
    public record RateDescriptor(int rateLimit, long ratePeriodMillis, int grantsInWindow, long untilSlotFreesMillis,
                                 int configuredRateLimit, long configuredRatePeriodMillis, String rateSource) {

        static @Nullable RateDescriptor of(RedisSemaphore semaphore, SemaphoreState state) {
            SemaphoreState.RateWindow window = state.rateWindow();
            if (window == null) {
                return null;
            }
            SemaphoreSettings settings = semaphore.settings();
            // (A window that tells no rate, 0: the configured one.)
            boolean told = window.rateLimit() > 0;
            return new RateDescriptor(told ? window.rateLimit() : settings.rateLimit(),
                    told ? window.ratePeriod().toMillis() : settings.ratePeriod().toMillis(), window.grants(),
                    window.untilSlotFrees().toMillis(), settings.rateLimit(), settings.ratePeriod().toMillis(),
                    window.overridden() ? SemaphoreState.OVERRIDE : SemaphoreState.CONFIGURED);
        }
    }

    /**
     * The cap of a capped semaphore, read by its base name, with its keys beneath it.
     *
     * @param name                 the base name ({@code exports})
     * @param totalLimit           the permits all keys together are granted up to now (the
     *                             cap's runtime limit, when one is set)
     * @param configuredTotalLimit this JVM's {@code total-permits}
     * @param totalLimitSource     {@code configured} (this JVM's own) or {@code override} (a runtime
     *                             cap set in Redis, followed by every JVM)
     * @param otherConfiguredTotalLimits the caps other JVMs are configured with, when they differ
     *                             from this JVM's (seen while no runtime cap was set)
     * @param configuredKeyLimit   this JVM's {@code permits} of each key (a key's runtime limit
     *                             shows in its own view)
     * @param used                 permits held, all keys together, fleet-wide
     * @param available            permits of the cap free
     * @param waiting              callers waiting, all keys together, fleet-wide
     * @param keys                 each key that holds or waits, by key
     */
    public record CapDescriptor(String name, int totalLimit, int configuredTotalLimit, String totalLimitSource,
                                List<OtherLimitDescriptor> otherConfiguredTotalLimits, int configuredKeyLimit, int used, int available, int waiting,
                                List<KeyDescriptor> keys) implements SemaphoreView {

        /** Reads the cap in Redis (one call) and sorts its holders and waiters by key. */
        static CapDescriptor of(SemaphoreCap cap) {
            SemaphoreState state = cap.state();
            Map<String, List<HolderDescriptor>> holders = new TreeMap<>();
            Map<String, List<WaiterDescriptor>> waiters = new TreeMap<>();
            state.holders().forEach(holder -> holders.computeIfAbsent(String.valueOf(holder.key()),
                    key -> new ArrayList<>()).add(new HolderDescriptor(holder)));
            state.waiters().forEach(waiter -> waiters.computeIfAbsent(String.valueOf(waiter.key()),
                    key -> new ArrayList<>()).add(new WaiterDescriptor(waiter)));
            Set<String> keys = new TreeSet<>(holders.keySet());
            keys.addAll(waiters.keySet());
            List<KeyDescriptor> described = keys.stream().map(key -> KeyDescriptor.of(cap.name(), key,
                    holders.getOrDefault(key, List.of()), waiters.getOrDefault(key, List.of()))).toList();
            return new CapDescriptor(state.name(), state.limit(), state.configuredLimit(), state.limitSource(),
                    OtherLimitDescriptor.of(cap.otherConfiguredLimits()), cap.settings().permits(), state.used(),
                    state.available(), state.waiters().size(), described);
        }
    }

    /**
     * One key of a cap, as the cap's state shows it.
     *
     * @param key     the key ({@code acme})
     * @param name    its semaphore ({@code exports:acme}), to read or limit it alone
     * @param used    permits it holds, fleet-wide
     * @param waiting callers waiting on it, fleet-wide
     * @param holders its leases
     * @param waiters its callers waiting, in arrival order
     */
    public record KeyDescriptor(String key, String name, int used, int waiting, List<HolderDescriptor> holders,
                                List<WaiterDescriptor> waiters) {

        static KeyDescriptor of(String baseName, String key, List<HolderDescriptor> holders,
                                List<WaiterDescriptor> waiters) {
            return new KeyDescriptor(key, baseName + ":" + key, holders.stream().mapToInt(held -> held.holder().count())
                    .sum(), waiters.size(), holders, waiters);
        }
    }

    /**
     * A limit another JVM is configured with for the semaphore.
     *
     * @param limit    its permits
     * @param lastSeen when a script reply last showed it, ISO-8601
     */
    public record OtherLimitDescriptor(int limit, String lastSeen) {

        static List<OtherLimitDescriptor> of(SortedMap<Integer, Instant> others) {
            return others.entrySet().stream()
                    .map(other -> new OtherLimitDescriptor(other.getKey(), other.getValue().toString())).toList();
        }
    }

    /**
     * One lease: the core's {@link SemaphoreState.Holder} ({@code permitId}, to force its release,
     * {@code count}, {@code fencingToken}, {@code owner}), with its time left as text. Its key is not
     * shown: a cap's view lists the leases under their key already.
     *
     * @param holder the lease as the core read it
     */
    public record HolderDescriptor(@JsonUnwrapped
                                   @JsonIncludeProperties({"permitId", "count", "fencingToken", "owner"})
                                   SemaphoreState.Holder holder) {

        /** @return time until it ends unless renewed, ISO-8601 ({@code PT28.5S}) whatever Jackson's settings */
        @JsonProperty("leaseRemaining")
        public String leaseRemaining() {
            return holder.leaseRemaining().toString();
        }
    }

    /**
     * One waiting caller: the core's {@link SemaphoreState.Waiter} ({@code waiterId}, the id its
     * permit will have, {@code count}, {@code owner}, its {@code position} in the queue of its key),
     * without its key, under which a cap lists it, and its predicted wait as ISO-8601 text when
     * one is known.
     *
     * @param waiter the caller as the core read it
     */
    public record WaiterDescriptor(@JsonUnwrapped @JsonIncludeProperties({"waiterId", "count", "owner", "position"})
                                   SemaphoreState.Waiter waiter) {

        /** @return the wait predicted for it from now ({@code PT1.2S}), or null (left out) while none is known */
        @JsonProperty("predictedWait")
        @JsonInclude(JsonInclude.Include.NON_NULL)
        public @Nullable String predictedWait() {
            Duration predicted = waiter.predictedWait();
            return predicted == null ? null : predicted.toString();
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
