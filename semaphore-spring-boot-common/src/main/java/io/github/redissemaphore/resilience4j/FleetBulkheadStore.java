package io.github.redissemaphore.resilience4j;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.core.RegistryStore;
import io.github.resilience4j.core.registry.InMemoryRegistryStore;

import java.util.Collection;
import java.util.Optional;
import java.util.function.Function;

/**
 * The store of a {@code BulkheadRegistry} that turns every bulkhead Resilience4j makes into a
 * {@link FleetBulkhead}: the registry resolves the name, configuration ({@code configs.<x>},
 * {@code baseConfig}, customizers) and tags as it always does and makes its own bulkhead of them;
 * this store keeps, in its place, one with the same name, configuration and tags, backed by the
 * distributed semaphore of that name. So {@code @Bulkhead(name = "#tenant", configuration =
 * "reports")}, which asks the registry for a bulkhead per key at its first call, gets a semaphore
 * per key too. Thread-pool bulkheads live in another registry and are left alone.
 */
public final class FleetBulkheadStore implements RegistryStore<Bulkhead> {

    private final RegistryStore<Bulkhead> bulkheads = new InMemoryRegistryStore<>();
    private final BulkheadSemaphores semaphores;

    /** @param semaphores makes the semaphore of each bulkhead */
    public FleetBulkheadStore(BulkheadSemaphores semaphores) {
        this.semaphores = semaphores;
    }

    @Override
    public Bulkhead computeIfAbsent(String key, Function<? super String, ? extends Bulkhead> mappingFunction) {
        return bulkheads.computeIfAbsent(key, name -> fleetWide(mappingFunction.apply(name)));
    }

    @Override
    public Bulkhead putIfAbsent(String key, Bulkhead value) {
        return bulkheads.putIfAbsent(key, fleetWide(value));
    }

    @Override
    public Optional<Bulkhead> find(String key) {
        return bulkheads.find(key);
    }

    @Override
    public Optional<Bulkhead> remove(String name) {
        return bulkheads.remove(name);
    }

    @Override
    public Optional<Bulkhead> replace(String name, Bulkhead newEntry) {
        return bulkheads.replace(name, fleetWide(newEntry));
    }

    @Override
    public Collection<Bulkhead> values() {
        return bulkheads.values();
    }

    private Bulkhead fleetWide(Bulkhead made) {
        if (made instanceof FleetBulkhead) {
            return made;
        }
        return new FleetBulkhead(made.getName(), made.getBulkheadConfig(), made.getTags(),
                semaphores.semaphoreFor(made.getName(), made.getBulkheadConfig()));
    }
}
