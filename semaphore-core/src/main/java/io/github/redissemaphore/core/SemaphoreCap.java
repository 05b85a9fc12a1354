package io.github.redissemaphore.core;

import java.time.Instant;
import java.util.SortedMap;

import org.jspecify.annotations.Nullable;

/**
 * The shared cap of a capped semaphore: every key of {@code "exports"} ({@code "exports:acme"},
 * {@code "exports:globex"}, ...) holds at most {@link SemaphoreSettings#permits()} permits, and all
 * of them together at most {@link SemaphoreSettings#totalPermits()}. A call takes its key's permits
 * and the cap's in one atomic step, or neither, and gives both back together. When the cap frees
 * a permit it goes to the waiting key that holds the fewest permits (ties: the earliest arrival);
 * within a key, callers are served in arrival order, and a key that is full blocks no other key.
 * Obtain one from {@link SemaphoreRegistry#cap(String)}.
 */
public interface SemaphoreCap {

    /** @return the base name of its keys ({@code "exports"}) */
    String name();

    /** @return the settings this JVM uses for every key ({@code permits} per key, {@code totalPermits} in all) */
    SemaphoreSettings settings();

    /** @return the semaphore of one key ({@code "exports:acme"} for {@code "acme"}) */
    RedisSemaphore semaphore(String key);

    /**
     * @return the cap in Redis now: its limit and usage of all keys together, every holder and
     *         waiter with its {@link SemaphoreState.Holder#key()} (waiters in arrival order; who is
     *         served first follows the rules above)
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     */
    SemaphoreState state();

    /**
     * Sets the cap in Redis at runtime, as {@link RedisSemaphore#overrideLimit(int)} sets a key's
     * limit: every JVM follows it until {@link #clearLimitOverride()}; lowering it takes no permit
     * from a holder, raising it serves the waiting keys at once.
     *
     * @param limit the permits all keys together are granted up to, 1..1,000,000
     * @throws IllegalArgumentException when {@code limit} is outside 1..1,000,000
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     */
    void overrideLimit(int limit);

    /**
     * @return the caps other JVMs are configured with, where they differ from this JVM's
     *         {@code totalPermits}, each with when a reply last showed it (kept a while after the
     *         last sight, as {@link LocalState#otherConfiguredLimits()} keeps a key's); from
     *         memory, no Redis call
     */
    SortedMap<Integer, Instant> otherConfiguredLimits();

    /**
     * @return the cap of all keys together as the newest script reply about any of its keys (or the
     *         cap itself) told this JVM; from memory, no Redis call; null until the first such reply,
     *         and by default (an implementation that keeps no figures)
     */
    default @Nullable ReportedUsage reportedUsage() {
        return null;
    }

    /**
     * Clears the cap's runtime limit: each JVM's configured {@code totalPermits} applies again.
     *
     * @throws SemaphoreUnavailableException when Redis cannot be reached
     */
    void clearLimitOverride();
}
