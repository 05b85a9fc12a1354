package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;

/**
 * Notices that other JVMs are configured with other permits for one semaphore (a rolling deploy
 * that changes {@code permits}, a forgotten instance): each script reply carries the configured
 * limit of the call before it. Without a runtime limit set in Redis every JVM grants up to its own
 * limit, so the fleet's limit is not what either side believes. This is logged once per base name
 * and other value in the registry ({@link LimitMismatches}), not once per call, per key or per
 * re-created semaphore, and kept for the endpoint until it has not been seen for a while.
 */
final class LimitMismatch {

    /** What the trackers of one registry share: the warnings given, and the clock. */
    interface Warnings {

        /** @return true the first time it is asked for this base name and other value: only then is a WARN logged */
        boolean firstWarning(String baseName, int other);

        long nanoTime();
    }

    private static final Logger log = EngineLogs.SEMAPHORE;

    private final String name;
    private final String baseName;
    private final int configured;
    private final boolean cap;
    private final long forgetAfterNanos;
    private final Warnings registry;
    /** Other configured limits seen -> when last seen. */
    private final Map<Integer, Seen> others = new ConcurrentHashMap<>();

    LimitMismatch(String name, String baseName, int configured, Duration forgetAfter, Warnings registry) {
        this(name, baseName, configured, forgetAfter, registry, false);
    }

    /** @param cap whether {@code configured} is the cap of a capped semaphore (its total permits) */
    LimitMismatch(String name, String baseName, int configured, Duration forgetAfter, Warnings registry, boolean cap) {
        this.cap = cap;
        this.name = name;
        this.baseName = baseName;
        this.configured = configured;
        this.forgetAfterNanos = forgetAfter.toNanos();
        this.registry = registry;
    }

    /** Takes in a reply's figures. A runtime limit in Redis makes every JVM use it: no mismatch then. */
    void seen(Usage usage) {
        seen(usage.previousConfiguredLimit(), usage.overridden());
    }

    /**
     * Takes in the configured limit of the call before a reply ({@code other}; 0: none known) and
     * whether a runtime limit is set, which every JVM follows.
     */
    void seen(int other, boolean overridden) {
        long now = registry.nanoTime();
        forgetOld(now);
        if (overridden || other <= 0 || other == configured) {
            return;
        }
        others.put(other, new Seen(Instant.now(), now));
        if (cap && registry.firstWarning(baseName + " total", other)) {
            log.warn("Semaphore '{}' is configured with total permits {} (its cap over all keys) in this JVM but with"
                    + " {} in another one: each JVM grants up to its own cap until they agree. Configure the same"
                    + " total-permits everywhere, or set a runtime cap that every JVM follows"
                    + " (SemaphoreCap.overrideLimit, or POST /actuator/semaphores/{} with {\"totalLimit\": N})",
                    baseName, configured, other, baseName);
        } else if (!cap && registry.firstWarning(baseName, other)) {
            String family = name.equals(baseName) ? "" : " (said once for every semaphore '" + baseName + ":<key>')";
            log.warn("Semaphore '{}' is configured with {} permits in this JVM but with {} in another one{}: each JVM"
                    + " grants up to its own limit until they agree. Configure the same permits everywhere, or set a"
                    + " runtime limit that every JVM follows (RedisSemaphore.overrideLimit, or POST"
                    + " /actuator/semaphores/{} with {\"limit\": N})", name, configured, other, family, name);
        }
    }

    /** @return the other configured limits seen lately, each with when it was last seen */
    SortedMap<Integer, Instant> others() {
        forgetOld(registry.nanoTime());
        SortedMap<Integer, Instant> seen = new TreeMap<>();
        others.forEach((limit, when) -> seen.put(limit, when.at()));
        return seen;
    }

    private void forgetOld(long now) {
        others.values().removeIf(seen -> now - seen.nanos() > forgetAfterNanos);
    }

    /** When a reply last showed a limit: as a date for people, and on the monotonic clock for the age. */
    private record Seen(Instant at, long nanos) {
    }
}
