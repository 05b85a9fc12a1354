package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

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
 * The JSON of every answer of the endpoint, member by member in its order, on the Boot line (and so
 * the Jackson) the test runs on: what an operator's script reads must not change when the endpoint's
 * records change, whichever Jackson writes them. Values that differ from run to run (ids, owners,
 * times, tokens) are replaced by their kind; the figures are kept.
 */
@RedisTest
class EndpointJsonShapeWebTest {

    private final RedisServer server;
    private final String prefix;
    private final List<Permit> held = new ArrayList<>();
    private ConfigurableApplicationContext instance;

    EndpointJsonShapeWebTest(RedisServer server) {
        this.server = server;
        this.prefix = server.keyPrefix() + ":json-shape-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void stop() {
        held.forEach(Permit::release);
        if (instance != null) {
            instance.close();
        }
    }

    @Test
    void everyAnswerKeepsItsMembersInTheirOrder() throws Exception {
        instance = new SpringApplicationBuilder(ShapeApplication.class).bannerMode(Banner.Mode.OFF)
                .properties("server.port=0", "spring.data.redis.url=" + server.uri(),
                        "management.endpoints.web.exposure.include=semaphores",
                        "management.endpoint.semaphores.access=unrestricted",
                        "distributed-semaphore.key-prefix=" + prefix,
                        "distributed-semaphore.semaphores.plain.permits=1",
                        "distributed-semaphore.semaphores.exports.permits=2",
                        "distributed-semaphore.semaphores.exports.total-permits=2",
                        "distributed-semaphore.semaphores.payments.permits=5",
                        "distributed-semaphore.semaphores.payments.rate-limit=10",
                        "distributed-semaphore.semaphores.payments.rate-period=1m")
                .run();
        SemaphoreRegistry registry = instance.getBean(SemaphoreRegistry.class);
        RedisSemaphore plain = registry.semaphore("plain");
        held.add(plain.tryAcquire().orElseThrow());
        CompletableFuture<Permit> plainWaits = plain.acquireAsync(1, Duration.ofSeconds(60));
        SemaphoreCap cap = registry.cap("exports");
        held.add(cap.semaphore("acme").tryAcquire(2, Duration.ZERO).orElseThrow());
        CompletableFuture<Permit> globexWaits = cap.semaphore("globex").acquireAsync(1, Duration.ofSeconds(60));
        await().until(() -> plain.state().waiters().size() == 1 && cap.state().waiters().size() == 1);

        assertThat(shape(call("GET", "/actuator/semaphores", null))).isEqualTo("""
                {"semaphores":[{"name":"exports","limit":2,"used":2,"available":0,"waiters":1},\
                {"name":"exports:acme","limit":2,"used":2,"available":0,"waiters":0},\
                {"name":"exports:globex","limit":2,"used":0,"available":2,"waiters":1},\
                {"name":"payments","limit":5,"used":0,"available":5,"waiters":0},\
                {"name":"plain","limit":1,"used":1,"available":0,"waiters":1}]}""");
        assertThat(shape(call("GET", "/actuator/semaphores/plain", null))).isEqualTo("""
                {"name":"plain","limit":1,"configuredLimit":1,"limitSource":"configured","otherConfiguredLimits":[],\
                "used":1,"available":0,"holders":[{"permitId":"id","count":1,"fencingToken":0,"owner":"owner",\
                "leaseRemaining":"PT"}],"waiters":[{"waiterId":"id","count":1,"owner":"owner","position":1}]}""");
        registry.semaphore("payments").tryAcquire().orElseThrow().release();
        assertThat(shape(call("GET", "/actuator/semaphores/payments", null))).isEqualTo("""
                {"name":"payments","limit":5,"configuredLimit":5,"limitSource":"configured","otherConfiguredLimits":[],\
                "used":0,"available":5,"holders":[],"waiters":[],\
                "rate":{"rateLimit":10,"ratePeriodMillis":60000,"grantsInWindow":1,"untilSlotFreesMillis":0,\
                "configuredRateLimit":10,"configuredRatePeriodMillis":60000,"rateSource":"configured"}}""");
        assertThat(shape(call("GET", "/actuator/semaphores/exports:acme", null))).isEqualTo("""
                {"name":"exports:acme","limit":2,"configuredLimit":2,"limitSource":"configured",\
                "otherConfiguredLimits":[],"used":2,"available":0,"holders":[{"permitId":"id","count":2,\
                "fencingToken":0,"owner":"owner","leaseRemaining":"PT"}],"waiters":[],\
                "total":{"name":"exports","limit":2,"used":2,"available":0,"waiters":1,"limitSource":"configured"}}""");
        assertThat(shape(call("GET", "/actuator/semaphores/exports", null))).isEqualTo("""
                {"name":"exports","totalLimit":2,"configuredTotalLimit":2,"totalLimitSource":"configured",\
                "otherConfiguredTotalLimits":[],"configuredKeyLimit":2,"used":2,"available":0,"waiting":1,\
                "keys":[{"key":"acme","name":"exports:acme","used":2,"waiting":0,"holders":[{"permitId":"id",\
                "count":2,"fencingToken":0,"owner":"owner","leaseRemaining":"PT"}],"waiters":[]},\
                {"key":"globex","name":"exports:globex","used":0,"waiting":1,"holders":[],\
                "waiters":[{"waiterId":"id","count":1,"owner":"owner","position":1}]}]}""");
        assertThat(shape(call("POST", "/actuator/semaphores/plain", "{\"limit\": 1}"))).isEqualTo("""
                {"name":"plain","limit":1,"configuredLimit":1,"limitSource":"override","otherConfiguredLimits":[],\
                "used":1,"available":0,"holders":[{"permitId":"id","count":1,"fencingToken":0,"owner":"owner",\
                "leaseRemaining":"PT"}],"waiters":[{"waiterId":"id","count":1,"owner":"owner","position":1}]}""");
        assertThat(shape(call("POST", "/actuator/semaphores/exports", "{\"totalLimit\": 2}"))).startsWith("""
                {"name":"exports","totalLimit":2,"configuredTotalLimit":2,"totalLimitSource":"override",""");
        assertThat(shape(call("DELETE", "/actuator/semaphores/plain/" + held.get(0).id(), null))).isEqualTo("""
                {"name":"plain","permitId":"id","released":true}""");
        call("POST", "/actuator/semaphores/plain", "{\"limit\": null}");
        call("POST", "/actuator/semaphores/exports", "{\"totalLimit\": null}");
        plainWaits.cancel(true);
        globexWaits.cancel(true);
    }

    private String call(String method, String path, String json) throws Exception {
        HttpResponse<String> response = EndpointCalls.send(instance, method, path, json);
        assertThat(response.statusCode()).as("%s %s: %s", method, path, response.body()).isEqualTo(200);
        return response.body();
    }

    /** @return the body with the values that differ from run to run replaced by their kind */
    private static String shape(String body) {
        return body.replaceAll("\"(permitId|waiterId)\":\"[^\"]*\"", "\"$1\":\"id\"")
                .replaceAll("\"owner\":\"[^\"]*\"", "\"owner\":\"owner\"")
                .replaceAll("\"fencingToken\":\\d+", "\"fencingToken\":0")
                .replaceAll("\"leaseRemaining\":\"PT[^\"]*\"", "\"leaseRemaining\":\"PT\"")
                // (known only once a hold ended while someone waited, which other tests may have made)
                .replaceAll(",\"predictedWait\":\"PT[^\"]*\"", "");
    }

    /** A web application with Actuator and nothing else: the test calls the semaphores itself. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ShapeApplication {
    }
}
