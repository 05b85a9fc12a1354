package io.github.redissemaphore.actuate;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServers;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;

/** A web application with Actuator and one guarded service, as a user would write it. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(EndpointTestApplication.GuardedService.class)
class EndpointTestApplication {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /**
     * Points the application at the test Redis, shared by the JVM since the context starts first,
     * and gives its key prefix as {@code redis.test.key-prefix}: a test's
     * {@code distributed-semaphore.key-prefix} starts with {@code ${redis.test.key-prefix}:}.
     */
    static void redis(DynamicPropertyRegistry properties) {
        properties.add("spring.data.redis.url", () -> RedisServers.shared().uri());
        properties.add("redis.test.key-prefix", () -> RedisServers.shared().keyPrefix());
    }

    static HttpResponse<String> send(String method, int port, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Sends a JSON body, as {@code curl -H 'Content-Type: application/json' -d ...} does. */
    static HttpResponse<String> send(String method, int port, String path, String json)
            throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(json)).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    static class GuardedService {

        @DistributedSemaphore(value = "endpoint-demo", waitTime = "20s")
        public String hold(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }
    }
}
