package io.github.redissemaphore.resilience4j;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.core.ConfigurationNotFoundException;
import io.github.resilience4j.core.registry.AbstractRegistry;
import io.github.resilience4j.core.registry.RegistryEventConsumer;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A Resilience4j {@link BulkheadRegistry} whose bulkheads are {@link FleetBulkhead}s: the registry
 * resolves the name, configuration and tags of a bulkhead as Resilience4j's own does, and makes one
 * backed by the distributed semaphore of that name. Its registry events (which Resilience4j's meters
 * and its {@code bulkheadevents} endpoint follow) carry the bulkheads it holds, so those read the
 * fleet's figures. {@code @Bulkhead(name = "#tenant", configuration = "reports")}, which asks for a
 * bulkhead per key at its first call, gets a semaphore per key. Thread-pool bulkheads live in
 * another registry and are left alone.
 */
public final class FleetBulkheadRegistry extends AbstractRegistry<Bulkhead, BulkheadConfig>
        implements BulkheadRegistry {

    private final BulkheadSemaphores semaphores;

    /**
     * @param defaultConfig  the configuration of a bulkhead asked for without one
     * @param eventConsumers who hears of each bulkhead added, replaced or removed
     * @param tags           the tags of every bulkhead
     * @param semaphores     makes the semaphore of each bulkhead
     */
    public FleetBulkheadRegistry(BulkheadConfig defaultConfig, List<RegistryEventConsumer<Bulkhead>> eventConsumers,
                                 Map<String, String> tags, BulkheadSemaphores semaphores) {
        super(defaultConfig, eventConsumers, tags);
        this.semaphores = semaphores;
    }

    @Override
    public Set<Bulkhead> getAllBulkheads() {
        return new HashSet<>(entryMap.values());
    }

    @Override
    public Bulkhead bulkhead(String name) {
        return bulkhead(name, Map.of());
    }

    @Override
    public Bulkhead bulkhead(String name, Map<String, String> tags) {
        return bulkhead(name, getDefaultConfig(), tags);
    }

    @Override
    public Bulkhead bulkhead(String name, BulkheadConfig config) {
        return bulkhead(name, config, Map.of());
    }

    @Override
    public Bulkhead bulkhead(String name, BulkheadConfig config, Map<String, String> tags) {
        Objects.requireNonNull(config, CONFIG_MUST_NOT_BE_NULL);
        return computeIfAbsent(name, () -> fleetWide(name, config, tags));
    }

    @Override
    public Bulkhead bulkhead(String name, Supplier<BulkheadConfig> configSupplier) {
        return bulkhead(name, configSupplier, Map.of());
    }

    @Override
    public Bulkhead bulkhead(String name, Supplier<BulkheadConfig> configSupplier, Map<String, String> tags) {
        Objects.requireNonNull(configSupplier, SUPPLIER_MUST_NOT_BE_NULL);
        return computeIfAbsent(name, () ->
                fleetWide(name, Objects.requireNonNull(configSupplier.get(), CONFIG_MUST_NOT_BE_NULL), tags));
    }

    @Override
    public Bulkhead bulkhead(String name, String configName) {
        return bulkhead(name, configName, Map.of());
    }

    @Override
    public Bulkhead bulkhead(String name, String configName, Map<String, String> tags) {
        return computeIfAbsent(name, () -> fleetWide(name,
                getConfiguration(configName).orElseThrow(() -> new ConfigurationNotFoundException(configName)), tags));
    }

    private FleetBulkhead fleetWide(String name, BulkheadConfig config, Map<String, String> tags) {
        return new FleetBulkhead(name, config, getAllTags(tags), semaphores.semaphoreFor(name, config));
    }
}
