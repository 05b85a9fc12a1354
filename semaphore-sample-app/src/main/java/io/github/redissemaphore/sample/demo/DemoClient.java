package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.sample.reports.ReportResponse;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * The demo's HTTP client: calls an instance's endpoints and sorts each answer into an
 * {@link Outcome}. A 429 counts as designed only when its problem names the reason, and, when it
 * refused the call at once with a predicted wait, carries a {@code Retry-After}: the demo checks
 * the API contract as well as the limit. A client refused at once comes back no sooner than its
 * {@code Retry-After} told it (a second when it said nothing), as a client should: one that came
 * back at once would only be refused again while the queue is full.
 */
final class DemoClient {

    /** How long a client refused at once without a Retry-After stays away. */
    private static final Duration BACK_OFF_WITHOUT_RETRY_AFTER = Duration.ofSeconds(1);

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
        return stayAwayIfRefused(post(instance.baseUri() + "/reports?title=demo", ReportResponse.class,
                ReportResponse::waitedMillis));
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

    /**
     * The members of a 429's problem the demo reads.
     *
     * @param reason              why: wait-timed-out, queue-full or predicted-wait-too-long
     * @param predictedWaitMillis the wait the semaphore predicted, when it knew one
     */
    private record Refusal(@Nullable String reason, @Nullable Long predictedWaitMillis) {
    }

    /** Waits as long as a refused call was told to (this thread is the client's own), then returns it. */
    private static Call stayAwayIfRefused(Call call) {
        if (call.outcome() == Outcome.REFUSED) {
            Duration away = call.retryAfterSeconds() != null ? Duration.ofSeconds(call.retryAfterSeconds())
                    : BACK_OFF_WITHOUT_RETRY_AFTER;
            try {
                Thread.sleep(away.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return call;
    }

    /** A 429 sorted by its reason, and checked: a refusal with a predicted wait must say when to come back. */
    private static Call tooManyRequests(@Nullable Refusal problem, @Nullable String retryAfter) {
        if (problem == null || problem.reason() == null) {
            return Call.failed("429 without its reason");
        }
        String reason = problem.reason();
        if (reason.equals("wait-timed-out")) {
            return Call.rejected();
        }
        if (retryAfter == null && problem.predictedWaitMillis() != null) {
            return Call.failed("429 " + reason + " with a predicted wait but no Retry-After");
        }
        if (retryAfter != null && !retryAfter.matches("[1-9][0-9]{0,8}")) {
            return Call.failed("429 with Retry-After '" + retryAfter + "', not a whole number of seconds");
        }
        return Call.refused(reason, retryAfter != null ? Integer.valueOf(retryAfter) : null);
    }

    private <T> Call post(String uri, Class<T> bodyType, ToLongFunction<T> waitedMillis) {
        try {
            return http.post().uri(uri).exchange((request, response) -> {
                if (response.getStatusCode().is2xxSuccessful()) {
                    return Call.served(waitedMillis.applyAsLong(response.bodyTo(bodyType)));
                }
                if (response.getStatusCode().isSameCodeAs(HttpStatus.TOO_MANY_REQUESTS)) {
                    return tooManyRequests(response.bodyTo(Refusal.class),
                            response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER));
                }
                return Call.failed("HTTP " + response.getStatusCode().value());
            });
        } catch (RestClientException e) {
            return Call.failed(e.getMessage());
        }
    }
}
