package io.github.redissemaphore.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.springframework.context.ConfigurableApplicationContext;

/** Calls of the {@code semaphores} endpoint over HTTP, as an operator's tool makes them, on a running instance. */
final class EndpointCalls {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private EndpointCalls() {
    }

    /** @return the answer to {@code method path} with {@code json} as the body (none when null) */
    static HttpResponse<String> send(ConfigurableApplicationContext instance, String method, String path, String json)
            throws IOException, InterruptedException {
        String port = instance.getEnvironment().getProperty("local.server.port");
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        if (json == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(json));
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
