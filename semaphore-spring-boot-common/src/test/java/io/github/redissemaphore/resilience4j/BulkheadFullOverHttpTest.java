package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.resilience4j.bulkhead.annotation.Bulkhead;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring MVC (and a WebFlux) application with Resilience4j and our starter, as a user writes it (Boot's
 * auto-configuration, Resilience4j's and ours): with the switch on, a bulkhead that refuses a call
 * answers 429 problem details naming the semaphore, as our own refusals do; without it,
 * Resilience4j's exception reaches Spring MVC as before (500).
 */
@RedisTest
class BulkheadFullOverHttpTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final RedisServer server;

    BulkheadFullOverHttpTest(RedisServer server) {
        this.server = server;
    }

    @ParameterizedTest
    @EnumSource(value = WebApplicationType.class, names = {"SERVLET", "REACTIVE"})
    void aRefusalIs429WithAProblemNamingTheSemaphore(WebApplicationType type) throws Exception {
        try (ConfigurableApplicationContext app = start(type, "--distributed-semaphore.resilience4j.enabled=true",
                "--distributed-semaphore.problem-details.retry-after=1500ms")) {
            HttpResponse<String> answer = whileHeld(app);
            assertThat(answer.statusCode()).isEqualTo(429);
            assertThat(answer.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(content -> assertThat(content).startsWith("application/problem+json"));
            assertThat(answer.headers().firstValue("Retry-After")).hasValue("2");
            assertThat(JsonParserFactory.getJsonParser().parseMap(answer.body()))
                    .containsEntry("status", 429)
                    .containsEntry("semaphore", "web-busy")
                    .containsEntry("detail", "No permit of semaphore 'web-busy' (Bulkhead 'web-busy' is full and does "
                            + "not permit further calls)");
            assertThat(get(app).statusCode()).as("with the permit back").isEqualTo(200);
        }
    }

    @Test
    void withoutTheSwitchTheApplicationAnswersAsBefore() throws Exception {
        try (ConfigurableApplicationContext app = start(WebApplicationType.SERVLET)) {
            assertThat(app.getBeansOfType(BulkheadFullExceptionHandler.class)).isEmpty();
            assertThat(whileHeld(app).statusCode()).isEqualTo(500);
        }
    }

    private ConfigurableApplicationContext start(WebApplicationType type, String... arguments) {
        SpringApplication application = new SpringApplication(WebApplication.class, Busy.class);
        application.setWebApplicationType(type);
        application.setBannerMode(Banner.Mode.OFF);
        String[] common = {"--server.port=0", "--spring.data.redis.url=" + server.uri(),
                "--distributed-semaphore.key-prefix=" + server.keyPrefix(),
                "--management.tracing.export.enabled=false",
                "--resilience4j.bulkhead.instances.web-busy.max-concurrent-calls=1",
                "--resilience4j.bulkhead.instances.web-busy.max-wait-duration=0"};
        String[] all = new String[common.length + arguments.length];
        System.arraycopy(common, 0, all, 0, common.length);
        System.arraycopy(arguments, 0, all, common.length, arguments.length);
        return application.run(all);
    }

    /** @return the answer to a call while another call holds the bulkhead's only permit */
    private static HttpResponse<String> whileHeld(ConfigurableApplicationContext app) throws Exception {
        Gate gate = new Gate();
        Work work = app.getBean(Work.class);
        CompletableFuture<String> holder = CompletableFuture.supplyAsync(() -> work.busy(gate));
        gate.awaitEntered(1);
        try {
            return get(app);
        } finally {
            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
        }
    }

    private static HttpResponse<String> get(ConfigurableApplicationContext app) throws Exception {
        String port = app.getEnvironment().getProperty("local.server.port");
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/busy"))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** An application as a user writes it. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WebApplication {
    }

    @RestController
    @Import(Work.class)
    static class Busy {

        private final Work work;

        Busy(Work work) {
            this.work = work;
        }

        @GetMapping("/busy")
        String busy() {
            return work.busy(null);
        }
    }

    /** The guarded service. */
    static class Work {

        @Bulkhead(name = "web-busy")
        public String busy(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }
    }
}
