package io.github.redissemaphore.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.springframework.context.ApplicationContext;

/** Plain HTTP calls at a running sample instance, for tests that check what goes over the wire. */
public final class SampleHttp {

    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private final String baseUri;

    private SampleHttp(String baseUri) {
        this.baseUri = baseUri;
    }

    /** @return a client for the instance of {@code context} (its {@code local.server.port}) */
    public static SampleHttp of(ApplicationContext context) {
        return at(Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port")));
    }

    /** @return a client for the instance listening on {@code port} of localhost */
    public static SampleHttp at(int port) {
        return new SampleHttp("http://localhost:" + port);
    }

    public HttpResponse<String> post(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUri + path)).POST(HttpRequest.BodyPublishers.noBody()));
    }

    public HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUri + path)).GET());
    }

    /** Sends {@code body} (none when null) with {@code method}, as a {@code curl} of the documentation would. */
    public HttpResponse<String> send(String method, String path, String body, String contentType) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUri + path)).method(method,
                body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return send(contentType == null ? request : request.header("Content-Type", contentType));
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return CLIENT.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
