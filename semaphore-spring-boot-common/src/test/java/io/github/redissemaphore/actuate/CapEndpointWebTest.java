package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The endpoint on a capped semaphore ({@code exports}: 2 permits per key, 3 in all), as an operator
 * uses it on two instances: the cap read by its base name with the keys beneath it, a key read by
 * its own name with the cap's figures, and the cap's runtime limit set and cleared over HTTP on one
 * instance and followed by the other.
 */
@RedisTest
class CapEndpointWebTest {

    private static final Duration BOUND = Duration.ofSeconds(20);

    private final RedisServer server;
    private final String prefix;
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();
    private final List<Permit> held = new ArrayList<>();

    CapEndpointWebTest(RedisServer server) {
        this.server = server;
        // Under the server's prefix (tests write no other key), a run of its own within it.
        this.prefix = server.keyPrefix() + ":cap-endpoint-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void stop() {
        held.forEach(Permit::release);
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void theCapIsReadByItsBaseNameWithItsKeysBeneathAndItsLimitIsSetAndClearedForEveryInstance() throws Exception {
        ConfigurableApplicationContext first = start();
        ConfigurableApplicationContext second = start();
        SemaphoreCap cap = first.getBean(SemaphoreRegistry.class).cap("exports");
        hold(cap, "acme");
        hold(cap, "acme");
        hold(cap, "globex");
        // the cap is full: one waiter of a key that holds one, one of a key that holds none
        CompletableFuture<Permit> globexWaits = cap.semaphore("globex").acquireAsync(1, Duration.ofSeconds(60));
        CompletableFuture<Permit> initechWaits = cap.semaphore("initech").acquireAsync(1, Duration.ofSeconds(60));
        await().atMost(BOUND).until(() -> cap.state().waiters().size() == 2);

        DocumentContext whole = json(send(second, "GET", "/actuator/semaphores/exports", null));
        assertThat(whole.<String>read("$.name")).isEqualTo("exports");
        assertThat(whole.<Integer>read("$.totalLimit")).isEqualTo(3);
        assertThat(whole.<Integer>read("$.configuredTotalLimit")).isEqualTo(3);
        assertThat(whole.<String>read("$.totalLimitSource")).isEqualTo("configured");
        assertThat(whole.<Integer>read("$.configuredKeyLimit")).isEqualTo(2);
        assertThat(whole.<Integer>read("$.used")).isEqualTo(3);
        assertThat(whole.<Integer>read("$.available")).isZero();
        assertThat(whole.<Integer>read("$.waiting")).isEqualTo(2);
        assertThat(whole.<List<String>>read("$.keys[*].key")).containsExactly("acme", "globex", "initech");
        assertThat(key(whole, "acme")).containsEntry("name", "exports:acme").containsEntry("used", 2)
                .containsEntry("waiting", 0);
        assertThat(whole.<List<Integer>>read("$.keys[?(@.key == 'acme')].holders[*].count")).containsExactly(1, 1);
        assertThat(key(whole, "globex")).containsEntry("used", 1).containsEntry("waiting", 1);
        assertThat(whole.<List<String>>read("$.keys[?(@.key == 'globex')].waiters[*].owner")).singleElement()
                .asString().contains("/");
        assertThat(key(whole, "initech")).containsEntry("used", 0).containsEntry("waiting", 1);

        // one key alone, with the cap's figures
        DocumentContext acme = json(send(second, "GET", "/actuator/semaphores/exports:acme", null));
        assertThat(acme.<Integer>read("$.used")).isEqualTo(2);
        assertThat(acme.<Integer>read("$.limit")).isEqualTo(2);
        assertThat(acme.<Map<String, Object>>read("$.total")).containsEntry("name", "exports")
                .containsEntry("limit", 3).containsEntry("used", 3).containsEntry("available", 0)
                .containsEntry("waiters", 2).containsEntry("limitSource", "configured");
        // in the list, the cap by its base name with the figures of all keys
        DocumentContext list = json(send(first, "GET", "/actuator/semaphores", null));
        assertThat(list.<List<Map<String, Object>>>read("$.semaphores[?(@.name == 'exports')]")).singleElement()
                .isEqualTo(Map.of("name", "exports", "limit", 3, "used", 3, "available", 0, "waiters", 2));

        // raised on the second instance: both waiting keys are served at once, and the first sees it
        DocumentContext raised = json(send(second, "POST", "/actuator/semaphores/exports", "{\"totalLimit\": 5}"));
        assertThat(raised.<Integer>read("$.totalLimit")).isEqualTo(5);
        assertThat(raised.<String>read("$.totalLimitSource")).isEqualTo("override");
        held.add(globexWaits.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        held.add(initechWaits.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        DocumentContext seenByFirst = json(send(first, "GET", "/actuator/semaphores/exports", null));
        assertThat(seenByFirst.<Integer>read("$.totalLimit")).isEqualTo(5);
        assertThat(seenByFirst.<String>read("$.totalLimitSource")).isEqualTo("override");
        assertThat(seenByFirst.<Integer>read("$.used")).isEqualTo(5);
        assertThat(seenByFirst.<Integer>read("$.waiting")).isZero();

        // cleared on the first: back to the configured 3 on both (lowering takes no permit back)
        DocumentContext cleared = json(send(first, "POST", "/actuator/semaphores/exports", "{\"totalLimit\": null}"));
        assertThat(cleared.<Integer>read("$.totalLimit")).isEqualTo(3);
        assertThat(cleared.<String>read("$.totalLimitSource")).isEqualTo("configured");
        assertThat(cleared.<Integer>read("$.used")).isEqualTo(5);
        DocumentContext seenBySecond = json(send(second, "GET", "/actuator/semaphores/exports", null));
        assertThat(seenBySecond.<Integer>read("$.totalLimit")).isEqualTo(3);
        assertThat(seenBySecond.<String>read("$.totalLimitSource")).isEqualTo("configured");
        assertThat(cap.state().limit()).isEqualTo(3);
    }

    @Test
    void aKeysLimitStaysOnItsOwnNameAndEachNameRefusesTheOtherKindOfLimit() throws Exception {
        ConfigurableApplicationContext instance = start();
        SemaphoreCap cap = instance.getBean(SemaphoreRegistry.class).cap("exports");

        HttpResponse<String> limitOnTheCap = EndpointCalls.send(instance, "POST", "/actuator/semaphores/exports",
                "{\"limit\": 1}");
        assertThat(limitOnTheCap.statusCode()).isEqualTo(400);
        assertThat(json(limitOnTheCap.body()).<String>read("$.message"))
                .startsWith("Send {\"totalLimit\": N} to set the runtime cap of all keys of 'exports' together")
                .contains("POST /actuator/semaphores/exports:<key> with {\"limit\": N}")
                .endsWith("the request has no \"totalLimit\" (it has \"limit\").");
        HttpResponse<String> empty = EndpointCalls.send(instance, "POST", "/actuator/semaphores/exports", "{}");
        assertThat(empty.statusCode()).isEqualTo(400);
        assertThat(json(empty.body()).<String>read("$.message")).endsWith("the request has no \"totalLimit\".");
        HttpResponse<String> outOfRange = EndpointCalls.send(instance, "POST", "/actuator/semaphores/exports",
                "{\"totalLimit\": 0}");
        assertThat(outOfRange.statusCode()).isEqualTo(400);
        assertThat(json(outOfRange.body()).<String>read("$.message"))
                .isEqualTo("totalLimit must be between 1 and 1000000 (or null to clear it), but was 0");
        HttpResponse<String> totalOnAPlainOne = EndpointCalls.send(instance, "POST", "/actuator/semaphores/plain",
                "{\"totalLimit\": 4}");
        assertThat(totalOnAPlainOne.statusCode()).isEqualTo(400);
        assertThat(json(totalOnAPlainOne.body()).<String>read("$.message"))
                .endsWith("the request has no \"limit\" (it has \"totalLimit\").");
        assertThat(cap.state().limitSource()).as("none of them changed the cap").isEqualTo("configured");

        // a key no JVM has used yet is addressable: the cap shows every JVM's keys
        DocumentContext keyLimited = json(send(instance, "POST", "/actuator/semaphores/exports:umbrella",
                "{\"limit\": 1}"));
        assertThat(keyLimited.<Integer>read("$.limit")).isEqualTo(1);
        assertThat(keyLimited.<String>read("$.limitSource")).isEqualTo("override");
        assertThat(keyLimited.<Integer>read("$.total.limit")).isEqualTo(3);
        assertThat(cap.semaphore("umbrella").state().limit()).isEqualTo(1);
        assertThat(cap.state().limitSource()).isEqualTo("configured");
        json(send(instance, "POST", "/actuator/semaphores/exports:umbrella", "{\"limit\": null}"));
        assertThat(cap.semaphore("umbrella").state().limitSource()).isEqualTo("configured");
    }

    @Test
    void aPermitIsForceReleasedThroughTheCapsBaseName() throws Exception {
        ConfigurableApplicationContext instance = start();
        SemaphoreCap cap = instance.getBean(SemaphoreRegistry.class).cap("exports");
        hold(cap, "acme");
        String permitId = json(send(instance, "GET", "/actuator/semaphores/exports", null))
                .read("$.keys[0].holders[0].permitId");

        DocumentContext released = json(send(instance, "DELETE", "/actuator/semaphores/exports/" + permitId, null));
        assertThat(released.<Boolean>read("$.released")).isTrue();
        assertThat(cap.state().used()).isZero();
    }

    private void hold(SemaphoreCap cap, String key) {
        held.add(cap.semaphore(key).tryAcquire().orElseThrow());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> key(DocumentContext cap, String key) {
        List<Map<String, Object>> found = cap.read("$.keys[?(@.key == '" + key + "')]");
        assertThat(found).as(key).hasSize(1);
        return found.get(0);
    }

    /** Starts one instance with the endpoint open; {@code properties} ("key=value") are added. */
    private ConfigurableApplicationContext start(String... properties) {
        List<String> settings = new ArrayList<>(List.of("server.port=0", "spring.data.redis.url=" + server.uri(),
                "management.endpoints.web.exposure.include=semaphores",
                "management.endpoint.semaphores.access=unrestricted",
                "distributed-semaphore.key-prefix=" + prefix,
                "distributed-semaphore.semaphores.exports.permits=2",
                "distributed-semaphore.semaphores.exports.total-permits=3",
                "distributed-semaphore.semaphores.plain.permits=2"));
        settings.addAll(List.of(properties));
        ConfigurableApplicationContext context = new SpringApplicationBuilder(CapApplication.class)
                .bannerMode(Banner.Mode.OFF)
                .properties(settings.toArray(String[]::new))
                .run();
        instances.add(context);
        return context;
    }

    private static String send(ConfigurableApplicationContext instance, String method, String path, String json)
            throws IOException, InterruptedException {
        HttpResponse<String> response = EndpointCalls.send(instance, method, path, json);
        assertThat(response.statusCode()).as("%s %s %s: %s", method, path, json, response.body()).isEqualTo(200);
        return response.body();
    }


    private static DocumentContext json(String body) {
        return JsonPath.parse(body);
    }

    /** A web application with Actuator and nothing else: the test calls the semaphores itself. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class CapApplication {
    }
}
