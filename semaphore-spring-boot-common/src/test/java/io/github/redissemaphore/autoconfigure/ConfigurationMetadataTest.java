package io.github.redissemaphore.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.json.JsonParserFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The properties an IDE completes: the configuration metadata the build generates from
 * {@link DistributedSemaphoreProperties}, with the starter's additions, lists each with its
 * description and default, and the values of a property that takes a word.
 */
class ConfigurationMetadataTest {

    @Test
    void theProblemDetailsAndTheUnguardableMethodsPropertiesAreListed() throws IOException {
        Map<String, Map<String, Object>> properties = entries("properties");
        assertThat(properties.get("distributed-semaphore.problem-details.enabled"))
                .containsEntry("type", "java.lang.Boolean").containsEntry("defaultValue", true)
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("429 Too Many Requests", "503 Service Unavailable"));
        assertThat(properties.get("distributed-semaphore.problem-details.retry-after"))
                .containsEntry("type", "java.time.Duration").doesNotContainKey("defaultValue")
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("Not set: no Retry-After"));
        assertThat(properties.get("distributed-semaphore.unguardable-methods"))
                .containsEntry("defaultValue", "fail")
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("private, static or final method"));
        List<?> values = (List<?>) entries("hints").get("distributed-semaphore.unguardable-methods").get("values");
        assertThat(values.stream().map(value -> (Object) ((Map<?, ?>) value).get("value")).toList())
                .containsExactly("fail", "warn");
    }

    @Test
    void theRedisTimeoutIsListedWithItsDefaultAndRange() throws IOException {
        assertThat(entries("properties").get("distributed-semaphore.redis-timeout"))
                .containsEntry("type", "java.time.Duration").containsEntry("defaultValue", "2s")
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("spring.data.redis.timeout", "SemaphoreUnavailableException", "100ms to 1m"));
    }

    @Test
    void theQueueBoundAndThePredictedRefusalAreListedInTheDefaultsAndPerSemaphore() throws IOException {
        Map<String, Map<String, Object>> properties = entries("properties");
        assertThat(properties.get("distributed-semaphore.defaults.max-waiters"))
                .containsEntry("type", "java.lang.Integer").doesNotContainKey("defaultValue")
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("across the whole fleet", "Not set: no bound", "1 to 1000000"));
        assertThat(properties.get("distributed-semaphore.defaults.reject-predicted-timeouts"))
                .containsEntry("type", "java.lang.Boolean").containsEntry("defaultValue", false)
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("predicted wait", "wait-time"));
    }

    @Test
    void theDegradedModeIsListedWithItsDefaultItsWordsAndTheShare() throws IOException {
        Map<String, Map<String, Object>> properties = entries("properties");
        assertThat(properties.get("distributed-semaphore.defaults.when-unavailable"))
                .containsEntry("defaultValue", "reject")
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("Redis cannot be reached", "\"reject\"", "\"local\"", "\"allow\""));
        assertThat(properties.get("distributed-semaphore.defaults.local-permits"))
                .containsEntry("type", "java.lang.Integer").doesNotContainKey("defaultValue")
                .hasEntrySatisfying("description", description -> assertThat((String) description)
                        .contains("share", "Not set", "1 to permits"));
        List<?> values = (List<?>) entries("hints").get("distributed-semaphore.defaults.when-unavailable").get("values");
        assertThat(values.stream().map(value -> (Object) ((Map<?, ?>) value).get("value")).toList())
                .containsExactly("reject", "local", "allow");
    }

    /** Every entry of {@code kind} ("properties", "hints") of the starter's metadata files, by name. */
    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> entries(String kind) throws IOException {
        Map<String, Map<String, Object>> entries = new HashMap<>();
        for (String file : List.of("META-INF/spring-configuration-metadata.json",
                "META-INF/additional-spring-configuration-metadata.json")) {
            for (URL url : Collections.list(ConfigurationMetadataTest.class.getClassLoader().getResources(file))) {
                try (InputStream in = url.openStream()) {
                    Map<String, Object> json = JsonParserFactory.getJsonParser()
                            .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                    for (Object entry : (List<Object>) json.getOrDefault(kind, List.of())) {
                        Map<String, Object> named = (Map<String, Object>) entry;
                        entries.putIfAbsent((String) named.get("name"), named);
                    }
                }
            }
        }
        return entries;
    }
}
