package io.github.redissemaphore.actuate;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.internal.DefaultRedisSemaphore;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Runtime limits as an operator uses them: two instances of a web application with the endpoint
 * open, the limit set, raised and cleared over HTTP on one of them, followed by both; and two
 * instances configured with different permits, each of which says so once.
 */
@RedisTest
class RuntimeLimitWebTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    /**
     * How soon a grant must reach its waiter when only the grant's own message can bring it: in the
     * test that needs it, ticks come every 5 minutes and renewals every 200 s.
     */
    private static final Duration HAND_OFF = Duration.ofSeconds(10);

    private final RedisServer server;
    private final String prefix;
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();
    private final Occupancy occupancy = new Occupancy();

    RuntimeLimitWebTest(RedisServer server) {
        this.server = server;
        // Under the server's prefix (tests write no other key), a run of its own within it.
        this.prefix = server.keyPrefix() + ":runtime-limit-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void stop() {
        occupancy.gates.values().forEach(Gate::open);
        callers.shutdownNow();
        instances.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void aLimitSetOverHttpIsFollowedByBothInstancesLoweredRaisedAndCleared() throws Exception {
        // Every grant must come by its message: no tick (5 min) nor renewal (lease 10 min, renewed
        // every 200 s) within the test would find it instead.
        String[] messagesOnly = {"distributed-semaphore.waiter-tick=5m", "distributed-semaphore.waiter-heartbeat=10m",
                "distributed-semaphore.semaphores.limited.lease-time=10m"};
        ConfigurableApplicationContext first = start(3, messagesOnly);
        ConfigurableApplicationContext second = start(3, messagesOnly);
        SemaphoreRegistry registry = first.getBean(SemaphoreRegistry.class);

        List<Future<?>> calls = new ArrayList<>();
        calls.add(call(first, "H1"));
        calls.add(call(second, "H2"));
        calls.add(call(first, "H3"));
        await().atMost(BOUND).until(() -> occupancy.inside.get() == 3);

        DocumentContext lowered = json(post(first, "{\"limit\": 1}"));
        assertThat(lowered.<Integer>read("$.limit")).isEqualTo(1);
        assertThat(lowered.<Integer>read("$.configuredLimit")).isEqualTo(3);
        assertThat(lowered.<String>read("$.limitSource")).isEqualTo("override");
        assertThat(lowered.<Integer>read("$.used")).isEqualTo(3);
        // The other instance shows it too: the limit lives in Redis.
        DocumentContext seenBySecond = json(get(second));
        assertThat(seenBySecond.<Integer>read("$.limit")).isEqualTo(1);
        assertThat(seenBySecond.<String>read("$.limitSource")).isEqualTo("override");

        // Three waiters, queued in a known order, alternating between the instances.
        for (String waiter : List.of("W1", "W2", "W3")) {
            int before = waiters(registry);
            calls.add(call(waiter.equals("W2") ? second : first, waiter));
            await().atMost(BOUND).until(() -> waiters(registry) == before + 1);
        }

        // Lowering takes nothing back, and nobody is granted until 1 permit is free.
        occupancy.leave("H1");
        occupancy.leave("H2");
        await().atMost(BOUND).until(() -> registry.semaphore("limited").state().used() == 1);
        assertThat(waiters(registry)).isEqualTo(3);
        assertThat(occupancy.entered).containsExactlyInAnyOrder("H1", "H2", "H3");

        occupancy.leave("H3");
        occupancy.resetMax();
        await().atMost(BOUND).until(() -> occupancy.entered.contains("W1"));
        occupancy.leave("W1");
        await().atMost(BOUND).until(() -> occupancy.entered.contains("W2"));
        assertThat(occupancy.entered.subList(3, 5)).containsExactly("W1", "W2");
        assertThat(occupancy.max).as("inside at once under the limit of 1").hasValue(1);

        // W2 inside, W3 waits; two more join. Raised to 5 on the other instance: all are served at
        // once, without a release.
        for (String waiter : List.of("W4", "W5")) {
            int before = waiters(registry);
            calls.add(call(second, waiter));
            await().atMost(BOUND).until(() -> waiters(registry) == before + 1);
        }
        DocumentContext raised = json(post(second, "{\"limit\": 5}"));
        assertThat(raised.<Integer>read("$.limit")).isEqualTo(5);
        // The override call itself grants and publishes: nothing else would wake them within minutes.
        await().atMost(HAND_OFF).until(() -> occupancy.inside.get() == 4);
        // One script call granted them in queue order; which enters its method first is up to the threads.
        assertThat(occupancy.entered.subList(5, 8)).containsExactlyInAnyOrder("W3", "W4", "W5");
        assertThat(waiters(registry)).isZero();

        // Cleared: back to 3 configured. The 4 held stay held; a new caller waits until it fits.
        DocumentContext cleared = json(post(first, "{\"limit\": null}"));
        assertThat(cleared.<Integer>read("$.limit")).isEqualTo(3);
        assertThat(cleared.<String>read("$.limitSource")).isEqualTo("configured");
        assertThat(cleared.<Integer>read("$.used")).isEqualTo(4);
        calls.add(call(second, "W6"));
        await().atMost(BOUND).until(() -> waiters(registry) == 1);
        occupancy.leave("W2");
        await().atMost(BOUND).until(() -> registry.semaphore("limited").state().used() == 3);
        assertThat(waiters(registry)).isEqualTo(1);
        occupancy.resetMax();
        occupancy.leave("W3");
        await().atMost(BOUND).until(() -> occupancy.entered.contains("W6"));
        assertThat(occupancy.max).as("inside at once under the configured 3").hasValueLessThanOrEqualTo(3);

        occupancy.gates.values().forEach(Gate::open);
        for (Future<?> call : calls) {
            call.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        }
        assertThat(json(get(second)).<String>read("$.limitSource")).isEqualTo("configured");
    }

    /**
     * A runtime rate set over HTTP on one instance: the other's grants follow it at once, both show
     * it, the permits' limit is left as it is, and {@code {"rateLimit": 0}} brings the configured
     * rate back. Each window is a minute long, so nothing ages out during the test.
     */
    @Test
    void aRateSetOverHttpIsFollowedByTheOtherInstanceAndClearedByZero() throws Exception {
        String[] rated = {"distributed-semaphore.semaphores.limited.rate-limit=2",
                "distributed-semaphore.semaphores.limited.rate-period=1m"};
        ConfigurableApplicationContext first = start(3, rated);
        ConfigurableApplicationContext second = start(3, rated);
        RedisSemaphore other = second.getBean(SemaphoreRegistry.class).semaphore("limited");
        other.tryAcquire().orElseThrow().release();
        other.tryAcquire().orElseThrow().release();
        assertThat(other.tryAcquire()).as("configured: 2 per minute").isEmpty();

        DocumentContext raised = json(post(first, "{\"rateLimit\": 4, \"ratePeriod\": \"1m\"}"));
        assertThat(raised.<Integer>read("$.rate.rateLimit")).isEqualTo(4);
        assertThat(raised.<Integer>read("$.rate.ratePeriodMillis")).isEqualTo(60000);
        assertThat(raised.<Integer>read("$.rate.configuredRateLimit")).isEqualTo(2);
        assertThat(raised.<String>read("$.rate.rateSource")).isEqualTo("override");
        assertThat(raised.<String>read("$.limitSource")).as("the permits' limit as it was").isEqualTo("configured");
        other.tryAcquire().orElseThrow().release();
        other.tryAcquire().orElseThrow().release();
        assertThat(other.tryAcquire()).as("the runtime rate: 4 per minute").isEmpty();
        DocumentContext seenBySecond = json(get(second));
        assertThat(seenBySecond.<Integer>read("$.rate.rateLimit")).isEqualTo(4);
        assertThat(seenBySecond.<Integer>read("$.rate.grantsInWindow")).isEqualTo(4);
        assertThat(seenBySecond.<String>read("$.rate.rateSource")).isEqualTo("override");

        // Both at once: the permits' runtime limit and a rate with the period as plain ms.
        DocumentContext both = json(post(second, "{\"limit\": 2, \"rateLimit\": 5, \"ratePeriod\": \"60000\"}"));
        assertThat(both.<Integer>read("$.limit")).isEqualTo(2);
        assertThat(both.<Integer>read("$.rate.rateLimit")).isEqualTo(5);
        // A request about the rate alone leaves the permits' limit set.
        assertThat(json(post(first, "{\"rateLimit\": 0}")).<String>read("$.limitSource")).isEqualTo("override");

        DocumentContext cleared = json(get(second));
        assertThat(cleared.<Integer>read("$.rate.rateLimit")).isEqualTo(2);
        assertThat(cleared.<String>read("$.rate.rateSource")).isEqualTo("configured");
        assertThat(other.tryAcquire()).as("configured again: 4 grants are past 2").isEmpty();
        json(post(first, "{\"limit\": null}"));
    }

    @Test
    void aBadRateIsABadRequestNamingTheKeyWithNothingChanged() throws Exception {
        ConfigurableApplicationContext instance = start(3, "distributed-semaphore.semaphores.limited.rate-limit=2",
                "distributed-semaphore.semaphores.limited.rate-period=1m");
        Map<String, String> refused = new LinkedHashMap<>();
        refused.put("{\"rateLimit\": 5}", "ratePeriod is required with rateLimit 5");
        refused.put("{\"ratePeriod\": \"1m\"}", "rateLimit is required with ratePeriod");
        refused.put("{\"rateLimit\": 100001, \"ratePeriod\": \"1m\"}", "rateLimit must be between 1 and 100000");
        refused.put("{\"rateLimit\": -1, \"ratePeriod\": \"1m\"}", "rateLimit must be between 1 and 100000");
        refused.put("{\"rateLimit\": 5, \"ratePeriod\": \"50ms\"}", "ratePeriod must be between 100 ms and 24 h");
        refused.put("{\"rateLimit\": 5, \"ratePeriod\": \"25h\"}", "ratePeriod must be between 100 ms and 24 h");
        refused.put("{\"rateLimit\": 5, \"ratePeriod\": \"soon\"}", "ratePeriod must be a duration");
        refused.put("{\"rateLimit\": 0, \"ratePeriod\": \"1m\"}", "ratePeriod must not come with rateLimit 0");
        refused.forEach((body, message) -> {
            HttpResponse<String> response = sendUnchecked(instance, body);
            assertThat(response.statusCode()).as("%s: %s", body, response.body()).isEqualTo(400);
            assertThat(json(response.body()).<String>read("$.message")).as(body).startsWith(message);
        });
        DocumentContext unchanged = json(get(instance));
        assertThat(unchanged.<String>read("$.rate.rateSource")).isEqualTo("configured");
        assertThat(unchanged.<Integer>read("$.rate.rateLimit")).isEqualTo(2);

        ConfigurableApplicationContext withoutRate = start(3);
        HttpResponse<String> noRate = EndpointCalls.send(withoutRate, "POST", "/actuator/semaphores/limited",
                "{\"rateLimit\": 5, \"ratePeriod\": \"1m\"}");
        assertThat(noRate.statusCode()).isEqualTo(400);
        assertThat(json(noRate.body()).<String>read("$.message"))
                .isEqualTo("Semaphore 'limited' has no rate-limit configured, so it has no rate to override");
    }

    @Test
    void aBadLimitOrAnUnknownSemaphoreIsABadRequest() throws Exception {
        ConfigurableApplicationContext instance = start(3);
        for (String body : List.of("{\"limit\": 0}", "{\"limit\": 1000001}", "{\"limit\": -2}")) {
            HttpResponse<String> response = EndpointCalls.send(instance, "POST", "/actuator/semaphores/limited", body);
            assertThat(response.statusCode()).as(body).isEqualTo(400);
            assertThat(json(response.body()).<String>read("$.message")).as(body)
                    .startsWith("limit must be between 1 and 1000000 (or null to clear it), but was ");
        }
        HttpResponse<String> unknown = EndpointCalls.send(instance, "POST", "/actuator/semaphores/never-used",
                "{\"limit\": 2}");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(json(unknown.body()).<String>read("$.message"))
                .isEqualTo("No semaphore 'never-used' is used or configured in this application");
        assertThat(instance.getBean(SemaphoreRegistry.class).semaphores())
                .noneMatch(semaphore -> semaphore.name().equals("never-used"));
        assertThat(json(get(instance)).<String>read("$.limitSource")).isEqualTo("configured");
    }

    @Test
    void aRequestWithoutTheLimitKeyIsRefusedAndLeavesTheLimitAsItIs() throws Exception {
        ConfigurableApplicationContext instance = start(3);
        json(post(instance, "{\"limit\": 2}"));

        Map<String, String> withoutLimit = new LinkedHashMap<>();
        withoutLimit.put("no body", "");
        withoutLimit.put("an empty object", "{}");
        withoutLimit.put("a misspelt key", "{\"limt\": 5}");
        withoutLimit.forEach((what, body) -> {
            HttpResponse<String> response = sendUnchecked(instance, body);
            assertThat(response.statusCode()).as("%s: %s", what, response.body()).isEqualTo(400);
            assertThat(json(response.body()).<String>read("$.message")).as(what)
                    .startsWith("Send {\"limit\": N} to set the runtime limit every JVM follows (N from 1 to 1000000),"
                            + " or {\"limit\": null} to clear it; the request has no \"limit\"");
        });
        assertThat(json(sendUnchecked(instance, "{\"limt\": 5}").body()).<String>read("$.message"))
                .endsWith("the request has no \"limit\" (it has \"limt\").");
        // without a body nor a content type, Spring MVC refuses it before the endpoint
        assertThat(sendUnchecked(instance, null).statusCode()).isEqualTo(415);
        DocumentContext unchanged = json(get(instance));
        assertThat(unchanged.<String>read("$.limitSource")).as("not cleared by any of them").isEqualTo("override");
        assertThat(unchanged.<Integer>read("$.limit")).isEqualTo(2);

        // an explicit null clears it
        DocumentContext cleared = json(post(instance, "{\"limit\": null}"));
        assertThat(cleared.<String>read("$.limitSource")).isEqualTo("configured");
        assertThat(cleared.<Integer>read("$.limit")).isEqualTo(3);
    }

    @Test
    void instancesConfiguredWithDifferentPermitsEachWarnOnceAndShowBothLimits() throws Exception {
        ConfigurableApplicationContext two = start(2);
        ConfigurableApplicationContext four = start(4);
        // Attached once the applications run: Spring Boot's logging system resets Logback at start-up.
        Logger logger = (Logger) LoggerFactory.getLogger(DefaultRedisSemaphore.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        logger.addAppender(logs);
        try {
            // Every call tells the caller what the previous one was configured with; many calls, one WARN each.
            for (int i = 0; i < 5; i++) {
                get(two);
                get(four);
            }

            DocumentContext seenByTwo = json(get(two));
            assertThat(seenByTwo.<Integer>read("$.configuredLimit")).isEqualTo(2);
            assertThat(seenByTwo.<Integer>read("$.limit")).isEqualTo(2);
            assertThat(seenByTwo.<List<Integer>>read("$.otherConfiguredLimits[*].limit")).containsExactly(4);
            assertThat(seenByTwo.<String>read("$.otherConfiguredLimits[0].lastSeen")).matches("\\d{4}-.*Z");
            DocumentContext seenByFour = json(get(four));
            assertThat(seenByFour.<Integer>read("$.configuredLimit")).isEqualTo(4);
            assertThat(seenByFour.<List<Integer>>read("$.otherConfiguredLimits[*].limit")).containsExactly(2);

            List<String> warnings = logs.list.stream()
                    .filter(event -> event.getLevel() == Level.WARN)
                    .map(ILoggingEvent::getFormattedMessage)
                    .filter(message -> message.contains("'limited'"))
                    .toList();
            assertThat(warnings).hasSize(2);
            assertThat(warnings).anySatisfy(message -> assertThat(message)
                    .contains("configured with 2 permits in this JVM but with 4 in another one"));
            assertThat(warnings).anySatisfy(message -> assertThat(message)
                    .contains("configured with 4 permits in this JVM but with 2 in another one"));
        } finally {
            logger.detachAppender(logs);
        }
    }

    /**
     * Starts one instance: a web application with the endpoint open and "limited" configured with
     * {@code permits}; {@code properties} ("key=value") replace the defaults here.
     */
    private ConfigurableApplicationContext start(int permits, String... properties) {
        Map<String, Object> settings = new LinkedHashMap<>(Map.of("server.port", "0",
                "spring.data.redis.url", server.uri(),
                "management.endpoints.web.exposure.include", "semaphores",
                "management.endpoint.semaphores.access", "unrestricted",
                "distributed-semaphore.key-prefix", prefix,
                "distributed-semaphore.waiter-tick", "200ms",
                "distributed-semaphore.waiter-heartbeat", "2s",
                "distributed-semaphore.semaphores.limited.permits", String.valueOf(permits)));
        for (String property : properties) {
            int equals = property.indexOf('=');
            settings.put(property.substring(0, equals), property.substring(equals + 1));
        }
        ConfigurableApplicationContext context = new SpringApplicationBuilder(LimitedApplication.class)
                .bannerMode(Banner.Mode.OFF)
                .properties(settings)
                .initializers(starting -> starting.getBeanFactory().registerSingleton("occupancy", occupancy))
                .run();
        instances.add(context);
        return context;
    }

    private Future<?> call(ConfigurableApplicationContext instance, String label) {
        Gate gate = new Gate();
        occupancy.gates.put(label, gate);
        Worker worker = instance.getBean(Worker.class);
        return callers.submit(() -> worker.work(label, gate));
    }

    private static int waiters(SemaphoreRegistry registry) {
        SemaphoreState state = registry.semaphore("limited").state();
        return state.waiters().size();
    }

    private static String get(ConfigurableApplicationContext instance) throws IOException, InterruptedException {
        HttpResponse<String> response = EndpointCalls.send(instance, "GET", "/actuator/semaphores/limited", null);
        assertThat(response.statusCode()).as("GET: %s", response.body()).isEqualTo(200);
        return response.body();
    }

    private static String post(ConfigurableApplicationContext instance, String body)
            throws IOException, InterruptedException {
        HttpResponse<String> response = EndpointCalls.send(instance, "POST", "/actuator/semaphores/limited", body);
        assertThat(response.statusCode()).as("POST %s: %s", body, response.body()).isEqualTo(200);
        return response.body();
    }

    private static HttpResponse<String> sendUnchecked(ConfigurableApplicationContext instance, String json) {
        try {
            return EndpointCalls.send(instance, "POST", "/actuator/semaphores/limited", json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }


    private static DocumentContext json(String body) {
        return JsonPath.parse(body);
    }

    /** Who is inside the guarded method, across both instances (one JVM), and in which order they came in. */
    static final class Occupancy {

        final Map<String, Gate> gates = new ConcurrentHashMap<>();
        final List<String> entered = new CopyOnWriteArrayList<>();
        final List<String> left = new CopyOnWriteArrayList<>();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();

        void enter(String label) {
            entered.add(label);
            max.accumulateAndGet(inside.incrementAndGet(), Math::max);
        }

        void exit(String label) {
            inside.decrementAndGet();
            left.add(label);
        }

        /** Lets {@code label} out of the guarded method and waits until it is out. */
        void leave(String label) {
            gates.get(label).open();
            await().atMost(BOUND).until(() -> left.contains(label));
        }

        void resetMax() {
            max.set(inside.get());
        }
    }

    /** The application's guarded work: it stays inside until the test lets it out. */
    static class Worker {

        private final Occupancy occupancy;

        Worker(Occupancy occupancy) {
            this.occupancy = occupancy;
        }

        @DistributedSemaphore(value = "limited", waitTime = "60s")
        public void work(String label, Gate gate) {
            occupancy.enter(label);
            try {
                gate.pass();
            } finally {
                occupancy.exit(label);
            }
        }
    }

    /** A web application with Actuator, as a user would write it. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Worker.class)
    static class LimitedApplication {
    }
}
