package io.github.redissemaphore.web;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The answers of a web application with the starter to the semaphores' exceptions, over real HTTP
 * on a real Redis: 429 and 503 problem details naming the semaphore, {@code Retry-After} only when
 * configured, the application's own advice first, and nothing when switched off. Run once on
 * Spring MVC and once on WebFlux, with the same endpoints: {@code GET /reports} guarded by semaphore
 * {@value #REPORTS}, {@code GET /exports/{tenant}} by {@value #EXPORTS} keyed by the tenant,
 * {@code GET /queued/{key}} by {@value #QUEUED} keyed by the path (each test a key of its own, so a
 * hold another test measured predicts nothing here).
 */
@RedisTest
abstract class ProblemDetailsHttpTestBase {

    static final String REPORTS = "web-reports";
    static final String EXPORTS = "web-exports";
    static final String QUEUED = "web-queued";

    /** How soon a caller the full queue refuses hears its 429, before the machine's scheduling noise. */
    private static final Duration AT_ONCE = Duration.ofMillis(100);
    /** How many refusals are timed, of which the fastest must come within {@link #AT_ONCE}. */
    private static final int TIMED_REFUSALS = 3;

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
    void aFullQueueIs429AtOnceNamingTheReasonWithARetryAfterComputedOnceAHoldIsMeasured() throws Exception {
        String key = UUID.randomUUID().toString();
        String semaphore = QUEUED + ":" + key;
        String settings = "--distributed-semaphore.semaphores." + QUEUED + ".";
        try (ConfigurableApplicationContext app = start(server, settings + "permits=1", settings + "max-waiters=1",
                settings + "wait-time=5s");
             SchedulingNoise noise = new SchedulingNoise()) {
            RedisSemaphore queued = app.getBean(SemaphoreRegistry.class).semaphore(semaphore);

            // no hold measured yet: refused at once, and no figure to advise
            Refusal unpredicted = refusedWhileOneWaits(app, queued, "/queued/" + key, 1).get(0);
            assertThat(unpredicted.answer().statusCode()).isEqualTo(429);
            assertThat(unpredicted.answer().headers().firstValue("Retry-After"))
                    .as("no prediction known, none configured: no header").isEmpty();
            assertThat(json(unpredicted.answer())).containsEntry("reason", "queue-full")
                    .containsEntry("detail", "No permit of semaphore '" + semaphore + "': refused at once, its queue is full")
                    .containsEntry("semaphore", semaphore)
                    .doesNotContainKey("predictedWaitMillis");

            // the hold above ended while a caller waited: measured, so the next refusals are told a wait
            List<Refusal> predicted = refusedWhileOneWaits(app, queued, "/queued/" + key, TIMED_REFUSALS);
            for (Refusal refusal : predicted) {
                assertThat(refusal.answer().statusCode()).isEqualTo(429);
                Map<String, Object> problem = json(refusal.answer());
                assertThat(problem).containsEntry("reason", "queue-full").containsEntry("status", 429);
                long predictedMillis = ((Number) problem.get("predictedWaitMillis")).longValue();
                assertThat(predictedMillis).as("a wait predicted from the measured hold").isPositive();
                assertThat((String) problem.get("detail")).isEqualTo("No permit of semaphore '" + semaphore
                        + "': refused at once, its queue is full (predicted wait " + predictedMillis + " ms)");
                long capped = Math.min(predictedMillis, ComputedRetryAfter.CAP.toMillis());
                long mostAdvised = Math.max(1, (capped + Math.max(1000, capped / 10) + 999) / 1000);
                assertThat(refusal.answer().headers().firstValue("Retry-After")).as("the predicted wait, jittered")
                        .hasValueSatisfying(seconds -> assertThat(Long.parseLong(seconds)).isBetween(1L, mostAdvised));
                System.out.printf("%s: a queue-full 429 came %.1f ms after its request, predicted wait %d ms, "
                                + "Retry-After %s (a 10 ms JDK timer ran up to %d ms late meanwhile)%n", type(),
                        refusal.millis(), predictedMillis, refusal.answer().headers().firstValue("Retry-After")
                                .orElseThrow(), noise.during(refusal.sentNanos(), refusal.answeredNanos()).toMillis());
            }
            // The fastest: the probe times one timer thread, while a request passes through several
            // (the client's, the server's, the Redis client's, Redis itself), each of which a loaded
            // machine may hold back longer; what the library adds shows in every one of them.
            Refusal fastest = predicted.stream().min(Comparator.comparingLong(Refusal::nanos)).orElseThrow();
            noise.assertTookLessThan("the fastest of " + TIMED_REFUSALS + " 429s of a full queue",
                    fastest.sentNanos(), fastest.answeredNanos(), AT_ONCE);
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
                    .containsEntry("detail", "Semaphore '" + REPORTS + "' is unavailable: Redis could not be "
                            + "reached, and its when-unavailable is reject (not local or allow), so every call fails "
                            + "until Redis answers again; try again later")
                    .containsEntry("semaphore", REPORTS)
                    .containsEntry("whenUnavailable", "reject");
            // a short cause a client may show; the full message names servers: it is for the log
            assertThat(json(answer).get("cause")).isIn("Redis cannot be reached", "Redis did not answer in time");
            assertThat(answer.body()).as("the full message names servers: it is for the log")
                    .doesNotContain("127.0.0.1", String.valueOf(dedicated.port()), "redis");
        }
    }

    /** Thrown by a controller, as the semaphore throws it while Redis cannot be reached: no outage needed. */
    @Test
    void aRefusalDecidedLocallyIs429SayingSoWithAShortRetryAfter() throws Exception {
        try (ConfigurableApplicationContext app = start(server)) {
            HttpResponse<String> answer = get(app, "/thrown/local-share-in-use");
            assertThat(answer.statusCode()).isEqualTo(429);
            assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(answer.headers().firstValue("Retry-After")).as("no prediction: a second").hasValue("1");
            assertThat(json(answer)).containsEntry("status", 429)
                    .containsEntry("reason", "local-share-in-use")
                    .containsEntry("whenUnavailable", "local")
                    .containsEntry("semaphore", REPORTS)
                    .containsEntry("detail", "No permit of semaphore '" + REPORTS + "': decided by this instance "
                            + "alone, as Redis could not be reached: its own share of the permits stayed in use for "
                            + "the 250 ms the call allowed");
        }
    }

    /** The mode comes from the semaphore's settings: a keyed name takes its base name's. */
    @Test
    void aServiceUnavailableNamesTheConfiguredModeOnlyWhenItIsReject() throws Exception {
        try (ConfigurableApplicationContext app = start(server,
                "--distributed-semaphore.semaphores." + EXPORTS + ".when-unavailable=local")) {
            HttpResponse<String> rejecting = get(app, "/thrown/unreachable/" + REPORTS);
            assertThat(rejecting.statusCode()).isEqualTo(503);
            assertThat(json(rejecting)).containsEntry("whenUnavailable", "reject")
                    .containsEntry("cause", "Redis cannot be reached");
            HttpResponse<String> local = get(app, "/thrown/unreachable/" + EXPORTS + ":acme");
            assertThat(local.statusCode()).isEqualTo(503);
            assertThat(json(local)).doesNotContainKey("whenUnavailable")
                    .containsEntry("detail", "Semaphore '" + EXPORTS + ":acme' is unavailable; try again later");
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
                Stream.of(WebApplication.class, controller(), Throwing.class), Stream.of(beans)).toArray(Class<?>[]::new));
        application.setWebApplicationType(type());
        application.setBannerMode(Banner.Mode.OFF);
        return application.run(Stream.concat(Stream.of("--server.port=0", "--spring.data.redis.url=" + redis.uri(),
                "--distributed-semaphore.key-prefix=" + redis.keyPrefix(),
                "--management.tracing.export.enabled=false"), Stream.of(arguments)).toArray(String[]::new));
    }

    private static HttpResponse<String> get(ConfigurableApplicationContext app, String path)
            throws IOException, InterruptedException {
        return HTTP.send(request(app, path), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(ConfigurableApplicationContext app, String path) {
        String port = app.getEnvironment().getProperty("local.server.port");
        return HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(30)).GET().build();
    }

    /** @return the answer to {@code call} while this test holds the only permit of {@code semaphore} */
    private static HttpResponse<String> whileHeld(ConfigurableApplicationContext app, String semaphore, Call call)
            throws Exception {
        try (Permit held = app.getBean(SemaphoreRegistry.class).semaphore(semaphore).tryAcquire().orElseThrow()) {
            return call.send();
        }
    }

    /**
     * Holds the only permit of {@code semaphore} while one request to {@code path} waits for it, sends
     * {@code count} more one after the other, which the full queue refuses, then gives the permit back
     * to the waiter: a hold that ended while a caller waited, which the semaphore measures.
     *
     * @return the answers to the requests refused, and when each was sent and answered
     */
    private static List<Refusal> refusedWhileOneWaits(ConfigurableApplicationContext app, RedisSemaphore semaphore,
                                                      String path, int count) throws Exception {
        CompletableFuture<HttpResponse<String>> waiter;
        List<Refusal> refusals = new ArrayList<>();
        // with a wait: the permit of the previous round may still be on its way back
        try (Permit held = semaphore.tryAcquire(Duration.ofSeconds(10)).orElseThrow()) {
            waiter = HTTP.sendAsync(request(app, path), HttpResponse.BodyHandlers.ofString());
            await().atMost(Duration.ofSeconds(10)).until(() -> semaphore.state().waiters().size() == 1);
            for (int i = 0; i < count; i++) {
                long sent = System.nanoTime();
                HttpResponse<String> answer = get(app, path);
                refusals.add(new Refusal(answer, sent, System.nanoTime()));
            }
        }
        assertThat(waiter.get(10, TimeUnit.SECONDS).statusCode()).as("the waiter, served once the permit is back")
                .isEqualTo(200);
        return refusals;
    }

    /** A request a full queue refused, and when it was sent and answered ({@link System#nanoTime()}). */
    private record Refusal(HttpResponse<String> answer, long sentNanos, long answeredNanos) {

        long nanos() {
            return answeredNanos - sentNanos;
        }

        double millis() {
            return nanos() / 1e6;
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

    /**
     * Throws the semaphores' exceptions of a Redis outage as the semaphore would: the same on MVC and
     * WebFlux, which both let a controller throw.
     */
    @RestController
    static class Throwing {

        @GetMapping("/thrown/local-share-in-use")
        String localShareInUse() {
            throw new SemaphoreRejectedException(REPORTS, 1, Duration.ofMillis(250),
                    SemaphoreRejectedException.Reason.LOCAL_SHARE_IN_USE, null, "its local share stayed in use");
        }

        @GetMapping("/thrown/unreachable/{semaphore}")
        String unreachable(@PathVariable String semaphore) {
            throw new SemaphoreUnavailableException(semaphore, SemaphoreUnavailableException.Reason.UNREACHABLE,
                    "Redis at 127.0.0.1:1 cannot be reached", null);
        }
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
