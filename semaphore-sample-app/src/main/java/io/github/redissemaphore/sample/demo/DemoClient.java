package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.sample.reports.ReportResponse;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.function.ToLongFunction;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * The demo's HTTP client: calls an instance's endpoints and sorts each answer into an
 * {@link Outcome}. A 429 counts as rejected only with its {@code Retry-After} header, so the demo
 * checks the API contract as well as the limit.
 */
final class DemoClient {

    private final RestClient http;

    DemoClient() {
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(client);
        // Longer than the longest wait for a permit (reports wait up to 10 s) plus the work.
        requests.setReadTimeout(Duration.ofSeconds(30));
        this.http = RestClient.builder().requestFactory(requests).build();
    }

    /** {@code POST /reports} at {@code instance}. */
    Call report(Instance instance) {
        return post(instance.baseUri() + "/reports?title=demo", ReportResponse.class, ReportResponse::waitedMillis);
    }

    /**
     * {@code POST /tenants/{tenant}/exports} at {@code instance}. Its wait is from sending to the
     * export's start ({@code startedAt}): the instances run in this JVM, on this clock.
     */
    Call export(Instance instance, String tenant) {
        Instant sentAt = Instant.now();
        return post(instance.baseUri() + "/tenants/" + tenant + "/exports", ExportStarted.class,
                body -> Math.max(0, Duration.between(sentAt, Instant.parse(body.startedAt())).toMillis()));
    }

    /** @param startedAt when the export began, ISO-8601: the part of the answer the demo reads */
    private record ExportStarted(String startedAt) {
    }

    private <T> Call post(String uri, Class<T> bodyType, ToLongFunction<T> waitedMillis) {
        try {
            return http.post().uri(uri).exchange((request, response) -> {
                if (response.getStatusCode().is2xxSuccessful()) {
                    return Call.served(waitedMillis.applyAsLong(response.bodyTo(bodyType)));
                }
                if (response.getStatusCode().isSameCodeAs(HttpStatus.TOO_MANY_REQUESTS)) {
                    return response.getHeaders().containsHeader(HttpHeaders.RETRY_AFTER)
                            ? Call.rejected()
                            : Call.failed("429 without Retry-After");
                }
                return Call.failed("HTTP " + response.getStatusCode().value());
            });
        } catch (RestClientException e) {
            return Call.failed(e.getMessage());
        }
    }
}
