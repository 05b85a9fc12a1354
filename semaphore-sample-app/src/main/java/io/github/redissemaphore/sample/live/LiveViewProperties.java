package io.github.redissemaphore.sample.live;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the live view at {@code /} ({@code sample.live.*}).
 *
 * @param tenants whose export semaphores ({@code exports:<tenant>}) the page shows and can fire
 *                bursts at; the demo's tenants by default
 */
@ConfigurationProperties("sample.live")
public record LiveViewProperties(@DefaultValue({"acme", "globex", "initech"}) List<String> tenants) {

    public LiveViewProperties {
        tenants = List.copyOf(tenants);
    }
}
