package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The caps of one registry's capped semaphores: every reply about one of a cap's keys carries the
 * cap's figures too, and this passes the newest on to the listeners (gauges of the whole, named by
 * the base name) and notices other JVMs configured with another cap. Shared by all keys of a cap,
 * and kept for the life of the registry: one entry per capped base name, as few as the
 * configuration names.
 */
final class CapFigures {

    private final Listeners listeners;
    private final LimitMismatches mismatches;
    private final Map<String, Cap> caps = new ConcurrentHashMap<>();

    CapFigures(Listeners listeners, LimitMismatches mismatches) {
        this.listeners = listeners;
        this.mismatches = mismatches;
    }

    /** Takes in a reply's figures of the cap {@code baseName} (none when it carries no cap's). */
    void seen(String baseName, SemaphoreSettings settings, Usage usage) {
        Usage.Total total = usage.total();
        if (total == null) {
            return;
        }
        Cap cap = caps.computeIfAbsent(baseName, name -> new Cap(new ReplyFigures.NewestUsage(), mismatches.ofCap(name, settings)));
        cap.newest().offer(usage, figures -> {
            Usage.Total newest = Objects.requireNonNull(figures.total(), "offered with a cap");
            listeners.totalUsageReported(baseName, newest.limit(), newest.used(), newest.waiters());
        });
        cap.mismatch().seen(total.previousConfiguredLimit(), total.override() > 0);
    }

    /** @return the other caps of {@code baseName} seen lately in other JVMs, each with when it was last seen */
    SortedMap<Integer, Instant> otherConfiguredLimits(String baseName) {
        Cap cap = caps.get(baseName);
        return cap == null ? new TreeMap<>() : cap.mismatch().others();
    }

    private record Cap(ReplyFigures.NewestUsage newest, LimitMismatch mismatch) {
    }
}
