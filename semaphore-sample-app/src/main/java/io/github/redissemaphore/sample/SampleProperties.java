package io.github.redissemaphore.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The sample's own settings ({@code sample.*} in application.yml); the semaphores themselves are
 * configured under {@code distributed-semaphore.*}, as in any application.
 *
 * @param instanceName  shown in every answer, to see which instance served a call
 * @param reportWork    how long one simulated report takes
 * @param exportWork    how long one simulated export takes
 * @param embeddedRedis the fallback Redis for a machine without one
 */
@ConfigurationProperties("sample")
public record SampleProperties(
        @DefaultValue("sample") String instanceName,
        @DefaultValue("200ms") Duration reportWork,
        @DefaultValue("500ms") Duration exportWork,
        @DefaultValue EmbeddedRedis embeddedRedis) {

    /**
     * @param enabled whether to start an embedded Redis when none answers at a local configured address;
     *                read by {@code EmbeddedRedisEnvironmentPostProcessor} before binding, listed here
     *                so the whole {@code sample.*} tree is in one place
     */
    public record EmbeddedRedis(@DefaultValue("true") boolean enabled) {
    }
}
