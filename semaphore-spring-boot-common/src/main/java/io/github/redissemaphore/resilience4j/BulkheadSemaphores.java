package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.autoconfigure.dropin.ConflictingLimitException;
import io.github.redissemaphore.autoconfigure.dropin.SemaphoreProperty;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.resilience4j.bulkhead.BulkheadConfig;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;

/**
 * Makes the distributed semaphore of a bulkhead: the settings of
 * {@code distributed-semaphore.semaphores.<name>} (or of its base name, or the defaults) with the
 * three Resilience4j gives: {@code maxConcurrentCalls} as {@code permits}, {@code maxWaitDuration}
 * as {@code wait-time}, {@code fairCallHandlingStrategyEnabled} as {@code fair}. An entry of the same
 * name that sets {@code permits} or {@code wait-time} to another value is refused, naming both
 * properties. {@code fair} is the exception: Resilience4j has no property for it (only a
 * {@code BulkheadConfigCustomizer}), so an entry's {@code fair} wins over Resilience4j's default.
 */
public final class BulkheadSemaphores {

    private final SemaphoreRegistry registry;
    private final Map<String, DistributedSemaphoreProperties.Semaphore> configured;
    private final BiFunction<String, String, String> resilience4jProperty;

    /**
     * @param registry             the semaphores
     * @param configured           the entries under {@code distributed-semaphore.semaphores}, as written
     * @param resilience4jProperty for a bulkhead name and a setting (e.g. {@code max-concurrent-calls}),
     *                             the Resilience4j property its value comes from, in the report of a conflict
     */
    public BulkheadSemaphores(SemaphoreRegistry registry, Map<String, DistributedSemaphoreProperties.Semaphore> configured,
                              BiFunction<String, String, String> resilience4jProperty) {
        this.registry = registry;
        this.configured = Map.copyOf(configured);
        this.resilience4jProperty = resilience4jProperty;
    }

    /**
     * @return the semaphore named {@code name}, with the limit, wait and fairness of {@code config}
     * @throws ConflictingLimitException when {@code distributed-semaphore.semaphores.<name>} says otherwise
     */
    public RedisSemaphore semaphoreFor(String name, BulkheadConfig config) {
        int permits = config.getMaxConcurrentCalls();
        Duration wait = config.getMaxWaitDuration();
        boolean fair = config.isFairCallHandlingEnabled();
        DistributedSemaphoreProperties.@Nullable Semaphore entry = configured.get(name);
        if (entry != null) {
            if (entry.permits() != null && entry.permits() != permits) {
                throw conflict(name, "max-concurrent-calls", permits, "permits", entry.permits());
            }
            if (entry.waitTime() != null && !Objects.equals(entry.waitTime(), wait)) {
                throw conflict(name, "max-wait-duration", wait, "wait-time", entry.waitTime());
            }
            if (entry.fair() != null) {
                fair = entry.fair();
            }
        }
        SemaphoreSettings settings = registry.settingsOf(name).withPermits(permits).withWaitTime(wait).withFair(fair);
        return registry.semaphore(name, settings);
    }

    private ConflictingLimitException conflict(String name, String theirSetting, Object theirs, String ourSetting,
                                               Object ours) {
        return new ConflictingLimitException(name,
                resilience4jProperty.apply(name, theirSetting) + " = " + theirs,
                SemaphoreProperty.of(name, ourSetting) + " = " + ours);
    }
}
