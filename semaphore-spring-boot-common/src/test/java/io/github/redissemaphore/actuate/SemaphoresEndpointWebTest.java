package io.github.redissemaphore.actuate;

import io.github.redissemaphore.starter.Gate;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The endpoint over HTTP with its default access: read-only. */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
        "management.endpoints.web.exposure.include=semaphores",
        "distributed-semaphore.key-prefix=${redis.test.key-prefix}:endpoint-read-only",
        "distributed-semaphore.semaphores.configured.permits=4"})
class SemaphoresEndpointWebTest extends EndpointWebTestBase {

    @Test
    void showsTheSemaphoresWithTheirHoldersAndWaitersWhileACallRuns() throws Exception {
        Gate gate = new Gate();
        Future<String> holder = callers.submit(() -> service.hold(gate));
        gate.awaitEntered(1);
        Future<String> waiter = callers.submit(() -> service.hold(null));
        await().until(() -> registry.semaphore("endpoint-demo").state().waiters().size() == 1);

        DocumentContext list = json(get("/actuator/semaphores"));
        assertThat(list.<List<Map<String, Object>>>read("$.semaphores[?(@.name == 'endpoint-demo')]"))
                .singleElement().isEqualTo(Map.of("name", "endpoint-demo", "limit", 1, "used", 1, "available", 0,
                        "waiters", 1));
        // configured, not used yet, listed all the same
        assertThat(list.<List<Map<String, Object>>>read("$.semaphores[?(@.name == 'configured')]"))
                .singleElement().isEqualTo(Map.of("name", "configured", "limit", 4, "used", 0, "available", 4,
                        "waiters", 0));

        DocumentContext details = json(get("/actuator/semaphores/endpoint-demo"));
        assertThat(details.<Integer>read("$.used")).isEqualTo(1);
        assertThat(details.<Integer>read("$.limit")).isEqualTo(1);
        assertThat(details.<Integer>read("$.configuredLimit")).isEqualTo(1);
        assertThat(details.<String>read("$.limitSource")).isEqualTo("configured");
        assertThat(details.<List<?>>read("$.otherConfiguredLimits")).isEmpty();
        assertThat(details.<List<?>>read("$.holders")).hasSize(1);
        assertThat(details.<String>read("$.holders[0].permitId")).matches("[A-Za-z0-9_-]{22}");
        assertThat(details.<Integer>read("$.holders[0].count")).isEqualTo(1);
        assertThat(details.<Number>read("$.holders[0].fencingToken").longValue()).isPositive();
        assertThat(details.<String>read("$.holders[0].owner")).endsWith("/" + gateThreadName(details));
        assertThat(details.<String>read("$.holders[0].leaseRemaining")).startsWith("PT");
        assertThat(details.<List<?>>read("$.waiters")).hasSize(1);
        assertThat(details.<Integer>read("$.waiters[0].count")).isEqualTo(1);

        gate.open();
        assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        await().until(() -> json(get("/actuator/semaphores/endpoint-demo")).<Integer>read("$.used") == 0);
    }

    @Test
    void anUnknownSemaphoreIsNotFound() throws Exception {
        assertThat(EndpointTestApplication.send("GET", port, "/actuator/semaphores/never-used").statusCode())
                .isEqualTo(404);
    }

    @Test
    void forcedReleaseIsRefusedByDefault() throws Exception {
        Gate gate = new Gate();
        Future<String> holder = callers.submit(() -> service.hold(gate));
        gate.awaitEntered(1);
        String permitId = json(get("/actuator/semaphores/endpoint-demo")).read("$.holders[0].permitId");

        HttpResponse<String> delete = EndpointTestApplication.send("DELETE", port,
                "/actuator/semaphores/endpoint-demo/" + permitId);
        assertThat(delete.statusCode()).isIn(404, 405);
        assertThat(registry.semaphore("endpoint-demo").state().used()).isEqualTo(1);

        gate.open();
        assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");
    }

    @Test
    void settingALimitIsRefusedByDefault() throws Exception {
        HttpResponse<String> post = EndpointTestApplication.send("POST", port, "/actuator/semaphores/configured",
                "{\"limit\": 1}");

        assertThat(post.statusCode()).as(post.body()).isEqualTo(405);
        DocumentContext details = json(get("/actuator/semaphores/configured"));
        assertThat(details.<Integer>read("$.limit")).isEqualTo(4);
        assertThat(details.<String>read("$.limitSource")).isEqualTo("configured");
    }

    /** The pool thread that holds the permit: its name ends the owner label. */
    private String gateThreadName(DocumentContext details) {
        String owner = details.read("$.holders[0].owner");
        return owner.substring(owner.lastIndexOf('/') + 1);
    }

    private String get(String path) throws Exception {
        HttpResponse<String> response = EndpointTestApplication.send("GET", port, path);
        assertThat(response.statusCode()).as("GET %s: %s", path, response.body()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type ->
                assertThat(type).contains("json"));
        return response.body();
    }

    private static DocumentContext json(String body) {
        return JsonPath.parse(body);
    }
}
