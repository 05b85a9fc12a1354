package io.github.redissemaphore.autoconfigure.resilience4j;

import io.github.redissemaphore.resilience4j.BulkheadSemaphores;
import io.github.redissemaphore.resilience4j.FleetBulkheadRegistry;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.bulkhead.event.BulkheadEvent;
import io.github.resilience4j.common.CompositeCustomizer;
import io.github.resilience4j.common.bulkhead.configuration.BulkheadConfigCustomizer;
import io.github.resilience4j.common.bulkhead.configuration.CommonBulkheadConfigurationProperties.InstanceProperties;
import io.github.resilience4j.consumer.EventConsumerRegistry;
import io.github.resilience4j.core.registry.RegistryEventConsumer;
import io.github.resilience4j.spring6.bulkhead.configure.BulkheadConfigurationProperties;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * Resilience4j's {@code resilience4j.bulkhead.*} properties, read the way Resilience4j's own
 * {@code BulkheadConfiguration} reads them (configs, instances, customizers, tags, event buffer
 * sizes), so that the registry made with our store is configured as Resilience4j's would have been,
 * and a conflict can name the Resilience4j property a value comes from.
 */
final class Resilience4jBulkheadProperties {

    private static final String DEFAULT_CONFIG = "default";
    private static final int DEFAULT_EVENT_BUFFER = 100;

    private final BulkheadConfigurationProperties properties;
    private final CompositeCustomizer<BulkheadConfigCustomizer> customizer;

    Resilience4jBulkheadProperties(BulkheadConfigurationProperties properties,
                                   CompositeCustomizer<BulkheadConfigCustomizer> customizer) {
        this.properties = properties;
        this.customizer = customizer;
    }

    /** @return a registry with the configurations of {@code resilience4j.bulkhead.configs}, its tags and meters */
    BulkheadRegistry newRegistry(BulkheadSemaphores semaphores, RegistryEventConsumer<Bulkhead> eventConsumer) {
        Map<String, BulkheadConfig> configs = new LinkedHashMap<>();
        properties.getConfigs().forEach((name, config) ->
                configs.put(name, properties.createBulkheadConfig(config, customizer, name)));
        BulkheadConfig defaultConfig = configs.containsKey(DEFAULT_CONFIG) ? configs.remove(DEFAULT_CONFIG)
                : BulkheadConfig.ofDefaults();
        BulkheadRegistry registry = new FleetBulkheadRegistry(defaultConfig, List.of(eventConsumer),
                Map.copyOf(properties.getTags()), semaphores);
        configs.forEach(registry::addConfiguration);
        return registry;
    }

    /** Every bulkhead's events reach the {@code bulkheadevents} endpoint, as with Resilience4j's registry. */
    void feedEventsTo(BulkheadRegistry registry, EventConsumerRegistry<BulkheadEvent> consumers) {
        registry.getEventPublisher()
                .onEntryAdded(event -> feed(consumers, event.getAddedEntry()))
                .onEntryReplaced(event -> feed(consumers, event.getNewEntry()))
                .onEntryRemoved(event -> consumers.removeEventConsumer(event.getRemovedEntry().getName()));
    }

    private void feed(EventConsumerRegistry<BulkheadEvent> consumers, Bulkhead bulkhead) {
        int bufferSize = Optional.ofNullable(properties.getBackendProperties(bulkhead.getName()))
                .map(InstanceProperties::getEventConsumerBufferSize).orElse(DEFAULT_EVENT_BUFFER);
        bulkhead.getEventPublisher().onEvent(consumers.createEventConsumer(bulkhead.getName(), bufferSize));
    }

    /** Makes the bulkheads of {@code resilience4j.bulkhead.instances}, then those only customizers name. */
    void createInstances(BulkheadRegistry registry) {
        properties.getInstances().forEach((name, instance) ->
                registry.bulkhead(name, properties.createBulkheadConfig(instance, customizer, name)));
        customizer.instanceNames().stream()
                .filter(name -> registry.getConfiguration(name).isEmpty() && !properties.getInstances().containsKey(name))
                .forEach(name -> registry.bulkhead(name, properties.createBulkheadConfig(null, customizer, name)));
    }

    /**
     * @param bulkhead a bulkhead's name
     * @param setting  a setting as Resilience4j's properties write it, e.g. {@code max-concurrent-calls}
     * @return the property its value comes from: the instance's, its base configuration's, the default
     *         configuration's, or else Resilience4j's default (or a customizer)
     */
    String propertyOf(String bulkhead, String setting) {
        Function<InstanceProperties, @Nullable Object> value = "max-wait-duration".equals(setting)
                ? InstanceProperties::getMaxWaitDuration : InstanceProperties::getMaxConcurrentCalls;
        @Nullable InstanceProperties instance = properties.getInstances().get(bulkhead);
        if (instance != null && value.apply(instance) != null) {
            return "resilience4j.bulkhead.instances." + bulkhead + "." + setting;
        }
        String base = instance != null && instance.getBaseConfig() != null ? instance.getBaseConfig() : DEFAULT_CONFIG;
        @Nullable InstanceProperties config = properties.getConfigs().get(base);
        if (config != null && value.apply(config) != null) {
            return "resilience4j.bulkhead.configs." + base + "." + setting;
        }
        return "Resilience4j's " + setting + " of bulkhead '" + bulkhead + "' (its default, or a BulkheadConfigCustomizer)";
    }
}
