package io.github.redissemaphore.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.Environment;

/** Finds a property as the user wrote it (value and origin), for the failure analyzers' reports. */
final class ConfiguredProperties {

    private ConfiguredProperties() {
    }

    /** @return the property {@code name} from the first property source that has it; null if none does */
    static @Nullable ConfigurationProperty lookUp(@Nullable Environment environment, ConfigurationPropertyName name) {
        if (environment == null) {
            return null;
        }
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty property = source.getConfigurationProperty(name);
            if (property != null) {
                return property;
            }
        }
        return null;
    }
}
