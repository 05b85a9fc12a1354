package io.github.redissemaphore.sample.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.sample.SampleHttp;
import io.github.redissemaphore.sample.SharedRedisApplicationTest;
import io.github.redissemaphore.sample.readme.Page.Mention;
import io.github.redissemaphore.sample.readme.ReadmeRequests.Request;

import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * Every HTTP request the README and the pages of {@code docs/} show is served by the sample: sent,
 * as written (method, body), to one running instance, it gets an answer other than 404 or 405 (a
 * 429 or a 503 is an answer); a path written without a method must not answer 404. What a page
 * pipes an endpoint's output into ({@code | grep ...}) finds what it looks for. The instance runs
 * with what the pages say to set for an endpoint ({@code management.endpoint.*} in their YAML
 * blocks, such as the access that opens the delete operation), on keys of its own.
 */
@TestPropertySource(properties = {"distributed-semaphore.key-prefix=readme-test",
        // what docs/operating.md turns on for quantiles, so its alert on the buckets reads a real series
        "management.metrics.distribution.percentiles-histogram.semaphore.acquire=true"})
class ReadmeEndpointsTest extends SharedRedisApplicationTest {

    private static final Docs DOCS = Docs.ofThisProject();
    private static final Pattern PATH_VARIABLE = Pattern.compile("\\{([^}]+)}|<([^>]+)>");
    /** A Prometheus series name of the library, and the short forms written after it: {@code `x_count`, `_sum`, `_max`}. */
    private static final Pattern PROMETHEUS_NAME = Pattern.compile(
            "(?<![\\w$])(semaphore_[a-z_]*[a-z])((?:`?, `_[a-z]+`)*)");

    @Autowired
    ApplicationContext context;

    @Autowired
    SemaphoreRegistry registry;

    /** Where the pages set one access several times (to open an operation, to close an endpoint), the widest. */
    private static final List<String> ACCESS_WIDENING = List.of("none", "read-only", "unrestricted");

    @DynamicPropertySource
    static void endpointSettingsOfThePages(DynamicPropertyRegistry properties) {
        Map<String, Object> settings = new LinkedHashMap<>();
        DOCS.pages().stream().flatMap(page -> page.blocks().stream())
                .filter(block -> block.info().equals("yaml") || block.info().equals("yml"))
                .flatMap(block -> YamlBlock.entries(block).stream())
                .filter(entry -> entry.name().startsWith("management.endpoint."))
                .filter(entry -> !(entry.value() instanceof Iterable<?>))
                .forEach(entry -> settings.merge(entry.name(), entry.value(), (before, now) ->
                        entry.name().endsWith(".access") && widening(before) > widening(now) ? before : now));
        settings.forEach((name, value) -> properties.add(name, () -> value));
    }

    private static int widening(Object access) {
        return ACCESS_WIDENING.indexOf(String.valueOf(access));
    }

    @TestFactory
    Stream<DynamicTest> everyRequestIsServed() {
        SampleHttp http = SampleHttp.of(context);
        return ReadmeRequests.of(DOCS).stream().map(request -> ReadmeCheck.named(request.describe(), () -> {
            int status = send(http, request).statusCode();
            assertThat(status).as("%s %s", request.method(), withValues(request.path()))
                    .isNotIn(request.methodWritten() ? List.of(404, 405) : List.of(404))
                    .matches(code -> code < 500 || code == 503, "an answer (below 500, or 503)");
        }));
    }

    /**
     * Prometheus lines carry the tag {@code application="semaphore-sample"}, so only an anchored
     * pattern ({@code grep '^semaphore_'}) picks out the library's meters.
     */
    @TestFactory
    Stream<DynamicTest> everyGrepOfAnEndpointsOutputFindsWhatItLooksFor() {
        SampleHttp http = SampleHttp.of(context);
        return ReadmeRequests.of(DOCS).stream()
                .filter(request -> !request.pipedInto().isEmpty() && request.pipedInto().get(0).equals("grep"))
                .map(request -> ReadmeCheck.named(request.describe(), () -> {
                    registry.semaphore("readme").tryAcquire().ifPresent(Permit::release); // so its meters exist
                    List<String> lines = Grep.of(request.pipedInto()).lines(send(http, request).body());
                    assertThat(lines).as("lines that %s prints", String.join(" ", request.pipedInto())).isNotEmpty();
                    if (request.path().startsWith("/actuator/prometheus")) {
                        assertThat(lines).as("the semaphore meters, and nothing else")
                                .allMatch(line -> line.startsWith("semaphore_"));
                    }
                }));
    }

    /** Every Prometheus name the pages write (in the metrics reference, the scrape, the alert rules) is scraped. */
    @TestFactory
    Stream<DynamicTest> everyPrometheusNameIsScraped() {
        SampleHttp http = SampleHttp.of(context);
        return DOCS.pages().stream().flatMap(page -> page.find(PROMETHEUS_NAME, 0).stream().distinct())
                .flatMap(found -> scraped(http, found));
    }

    private Stream<DynamicTest> scraped(SampleHttp http, Mention found) {
        Matcher name = PROMETHEUS_NAME.matcher(found.text());
        assertThat(name.matches()).isTrue();
        String full = name.group(1);
        Stream<String> names = Stream.concat(Stream.of(full), Pattern.compile("_[a-z]+").matcher(name.group(2))
                .results().map(suffix -> full.substring(0, full.lastIndexOf('_')) + suffix.group()));
        return names.map(series -> ReadmeCheck.named(found.where() + ": " + series, () -> {
            // an acquisition, a hold and a release of a keyed and a plain semaphore, so every meter exists,
            registry.semaphore("readme").tryAcquire().ifPresent(Permit::release);
            registry.semaphore("readme:acme").tryAcquire().ifPresent(Permit::release);
            // and a key of the sample's capped semaphore, so the cap's gauges exist
            registry.cap("exports").semaphore("acme").tryAcquire().ifPresent(Permit::release);
            String scrape = http.send("GET", "/actuator/prometheus", null, null).body();
            // Boot's histogram setting matches by prefix, so the semaphore.acquire histogram of
            // docs/operating.md turns the semaphore.acquire.active long-task timer into a histogram
            // too, whose count and sum Prometheus calls _gcount and _gsum (the page says so).
            String histogramForm = series.replaceFirst("_active_seconds_(count|sum)$", "_active_seconds_g$1");
            assertThat(scrape.lines()).as("the scrape of /actuator/prometheus")
                    .anyMatch(line -> Stream.of(series, histogramForm).anyMatch(
                            written -> line.startsWith(written + "{") || line.startsWith(written + " ")));
        }));
    }

    private static HttpResponse<String> send(SampleHttp http, Request request) {
        return http.send(request.method(), withValues(request.path()), request.body(), request.contentType());
    }

    /** Fills in path variables: a tenant of the demo, a semaphore the sample configures, else a made-up id. */
    private static String withValues(String path) {
        Matcher variable = PATH_VARIABLE.matcher(path);
        StringBuilder filled = new StringBuilder();
        while (variable.find()) {
            String name = variable.group(1) != null ? variable.group(1) : variable.group(2);
            variable.appendReplacement(filled, name.toLowerCase().contains("tenant") ? "acme"
                    : name.equals("name") ? "reports" : "readme-test");
        }
        return variable.appendTail(filled).toString();
    }
}
