package io.github.redissemaphore.web;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The answers of a web application with the starter to the semaphores' exceptions, over real HTTP
 * on a real Redis: 429 and 503 problem details naming the semaphore, {@code Retry-After} only when
 * configured, the application's own advice first, and nothing when switched off. Run once on
 * Spring MVC and once on WebFlux, with the same endpoints: {@code GET /reports} guarded by semaphore
 * {@value #REPORTS}, {@code GET /exports/{tenant}} by {@value #EXPORTS} keyed by the tenant.
 */
@RedisTest
abstract class ProblemDetailsHttpTestBase {

    static final String REPORTS = "web-reports";
    static final String EXPORTS = "web-exports";

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final RedisServer server;

    ProblemDetailsHttpTestBase(RedisServer server) {
        this.server = server;
    }

    /** @return the web stack under test */
    abstract WebApplicationType type();

    /** @return the controller serving the endpoints on that stack, through a guarded service of its own */
    abstract Class<?> controller();

    @Test
    void noPermitInTimeIs429WithAProblemNamingTheSemaphore() throws Exception {
        try (ConfigurableApplicationContext app = start(server)) {
            HttpResponse<String> answer = whileHeld(app, REPORTS, () -> get(app, "/reports"));

            assertThat(answer.statusCode()).isEqualTo(429);
            assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(answer.headers().firstValue("Retry-After")).as("no honest figure, no header").isEmpty();
            // "type" is about:blank (RFC 9457, 3.1.1), which Spring Framework 7 leaves out and 6.2 writes;
            // the title is the status's phrase
            assertThat(json(answer).get("type")).isEqualTo(BootLine.BLANK_PROBLEM_TYPE);
            assertThat(json(answer)).containsEntry("title", "Too Many Requests")
                    .containsEntry("status", 429)
                    .containsEntry("detail", "No permit of semaphore '" + REPORTS + "' was free within 0 ms")
                    .containsEntry("instance", "/reports")
                    .containsEntry("semaphore", REPORTS)
                    .containsEntry("permits", 1)
                    .containsEntry("waitedMillis", 0);
            assertThat(get(app, "/reports").statusCode()).as("with the permit back").isEqualTo(200);
        }
    }

    @Test
    void aKeyedSemaphoreIsNamedWithItsKey() throws Exception {
        try (ConfigurableApplicationContext app = start(server)) {
            HttpResponse<String> answer = whileHeld(app, EXPORTS + ":acme", () -> get(app, "/exports/acme"));
            assertThat(answer.statusCode()).isEqualTo(429);
            assertThat(json(answer)).containsEntry("semaphore", EXPORTS + ":acme");
            assertThat(whileHeld(app, EXPORTS + ":acme", () -> get(app, "/exports/globex")).statusCode())
                    .as("another tenant").isEqualTo(200);
        }
    }

    @Test
    void retryAfterIsTheConfiguredFigureInWholeSecondsRoundedUp() throws Exception {
        try (ConfigurableApplicationContext app = start(server,
                "--distributed-semaphore.problem-details.retry-after=1500ms")) {
            HttpResponse<String> answer = whileHeld(app, REPORTS, () -> get(app, "/reports"));
            assertThat(answer.statusCode()).isEqualTo(429);
            assertThat(answer.headers().firstValue("Retry-After")).hasValue("2");
        }
    }

    @Test
    void redisUnavailableIs503WithAProblemNamingTheSemaphore(@Dedicated RedisServer dedicated) throws Exception {
        try (ConfigurableApplicationContext app = start(dedicated, "--spring.data.redis.timeout=1s",
                "--distributed-semaphore.problem-details.retry-after=5s")) {
            assertThat(get(app, "/reports").statusCode()).isEqualTo(200);
            dedicated.stop();

            HttpResponse<String> answer = get(app, "/reports");
            assertThat(answer.statusCode()).isEqualTo(503);
            assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(answer.headers().firstValue("Retry-After")).hasValue("5");
            assertThat(json(answer)).containsEntry("title", "Service Unavailable")
                    .containsEntry("status", 503)
                    .containsEntry("detail", "Semaphore '" + REPORTS + "' is unavailable; try again later")
                    .containsEntry("semaphore", REPORTS);
            // a short cause a client may show; the full message names servers: it is for the log
            assertThat(json(answer).get("cause")).isIn("Redis cannot be reached", "Redis did not answer in time");
            assertThat(answer.body()).as("the full message names servers: it is for the log")
                    .doesNotContain("127.0.0.1", String.valueOf(dedicated.port()), "redis");
        }
    }

    @Test
    void theApplicationsOwnAdviceAnswersFirst() throws Exception {
        try (ConfigurableApplicationContext app = start(server, new Class<?>[] {OwnRejectionAdvice.class})) {
            HttpResponse<String> answer = whileHeld(app, REPORTS, () -> get(app, "/reports"));
            assertThat(answer.statusCode()).isEqualTo(418);
            assertThat(answer.body()).isEqualTo("busy: " + REPORTS);
        }
        try (ConfigurableApplicationContext app = start(server, new Class<?>[] {OwnCatchAllAdvice.class})) {
            assertThat(whileHeld(app, REPORTS, () -> get(app, "/reports")).statusCode())
                    .as("an advice of the application for every exception answers first too").isEqualTo(500);
        }
    }

    @Test
    void switchedOffTheLibraryAnswersNothing() throws Exception {
        try (ConfigurableApplicationContext app = start(server,
                "--distributed-semaphore.problem-details.enabled=false")) {
            assertThat(app.getBeanNamesForType(SemaphoreExceptionHandler.class)).isEmpty();
            HttpResponse<String> answer = whileHeld(app, REPORTS, () -> get(app, "/reports"));
            assertThat(answer.statusCode()).as("Spring's answer to an exception nothing handles").isEqualTo(500);
            assertThat(answer.body()).doesNotContain("\"semaphore\"");
        }
    }

    private ConfigurableApplicationContext start(RedisServer redis, String... arguments) {
        return start(redis, new Class<?>[0], arguments);
    }

    private ConfigurableApplicationContext start(RedisServer redis, Class<?>[] beans, String... arguments) {
        SpringApplication application = new SpringApplication(Stream.concat(
                Stream.of(WebApplication.class, controller()), Stream.of(beans)).toArray(Class<?>[]::new));
        application.setWebApplicationType(type());
        application.setBannerMode(Banner.Mode.OFF);
        return application.run(Stream.concat(Stream.of("--server.port=0", "--spring.data.redis.url=" + redis.uri(),
                "--distributed-semaphore.key-prefix=" + redis.keyPrefix(),
                "--management.tracing.export.enabled=false"), Stream.of(arguments)).toArray(String[]::new));
    }

    private static HttpResponse<String> get(ConfigurableApplicationContext app, String path)
            throws IOException, InterruptedException {
        String port = app.getEnvironment().getProperty("local.server.port");
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(30)).GET().build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** @return the answer to {@code call} while this test holds the only permit of {@code semaphore} */
    private static HttpResponse<String> whileHeld(ConfigurableApplicationContext app, String semaphore, Call call)
            throws Exception {
        try (Permit held = app.getBean(SemaphoreRegistry.class).semaphore(semaphore).tryAcquire().orElseThrow()) {
            return call.send();
        }
    }

    private static Map<String, Object> json(HttpResponse<String> answer) {
        return JsonParserFactory.getJsonParser().parseMap(answer.body());
    }

    @FunctionalInterface
    private interface Call {
        HttpResponse<String> send() throws Exception;
    }

    /** An application as a user writes it: Boot's auto-configuration, the starter's included. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WebApplication {
    }

    /** An application's own answer to a rejection. */
    @RestControllerAdvice
    static class OwnRejectionAdvice {

        @ExceptionHandler
        ResponseEntity<String> busy(SemaphoreRejectedException e) {
            return ResponseEntity.status(HttpStatus.I_AM_A_TEAPOT).body("busy: " + e.getSemaphoreName());
        }
    }

    /** An application's answer to every exception, as some write one. */
    @RestControllerAdvice
    static class OwnCatchAllAdvice {

        @ExceptionHandler
        ResponseEntity<String> failed(Exception e) {
            return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("failed");
        }
    }
}
