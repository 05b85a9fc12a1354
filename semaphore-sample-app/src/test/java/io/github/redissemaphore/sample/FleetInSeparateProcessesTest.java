package io.github.redissemaphore.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.test.FreePorts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
import io.github.redissemaphore.test.SchedulingNoise;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * "A fleet in separate processes" of docs/sample-app.md, with real separate processes: two sample instances
 * in child JVMs share the embedded Redis that the first one started, and share its limits; when the
 * first one stops, its Redis stops with it and the second answers guarded calls with 503 (without
 * starting a Redis of its own) until a Redis answers on that port again; a restarted first instance
 * starts a new embedded Redis on a new port instead of bringing the old one back.
 *
 * <p>The times the survivor took to answer 503 after the owner exited, and 200 after Redis came
 * back, are printed (in {@code target/surefire-reports/...-output.txt}). Each child's output is
 * kept in {@code target/fleet-in-separate-processes/}.
 */
@Tag("slow")
class FleetInSeparateProcessesTest {

    /**
     * JVM start-up of a Spring Boot app on a loaded machine can take 10-20 s; two of them at once,
     * beside the build's other test JVMs and two busy loops on two cores, took more than 60 s.
     */
    private static final Duration START_UP = Duration.ofSeconds(120);
    private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(1);
    /** A 503 comes "within spring.data.redis.timeout": far below the reports' wait-time of 10 s. */
    private static final Duration UNAVAILABLE_ANSWER_BOUND = REDIS_TIMEOUT.plusSeconds(4);
    private static final String GUARDED = "/reports?title=q";
    private static final String GUARDED_EXPORT = "/tenants/acme/exports";
    private static final int PERMITS = 3;
    private static final int CONCURRENT_REPORTS = 12;
    /** The WARN of EmbeddedRedisEnvironmentPostProcessor, as docs/sample-app.md quotes it. */
    private static final Pattern EMBEDDED_STARTED = Pattern.compile(
            "No Redis answered at localhost:(\\d+): started an embedded Redis on 127\\.0\\.0\\.1:(\\d+) ");
    private static final Pattern STARTED = Pattern.compile("Started SampleApplication in ");
    private static final Path LOGS = Path.of("target", "fleet-in-separate-processes");

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    /** Everything started here, closed in reverse order after the test, pass or fail. */
    private final List<AutoCloseable> started = new ArrayList<>();
    /** The machine's scheduling noise while the test runs, which widens the bound timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();
    private final String keyPrefix = "fleet-" + Integer.toHexString(ThreadLocalRandom.current().nextInt());

    @AfterEach
    void stopEverything() {
        noise.close();
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                System.out.println("cleanup: could not close " + started.get(i) + ": " + e);
            }
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void twoProcessesShareTheEmbeddedRedisAndTheSurvivorWaitsForARedisAtThatPort() throws Exception {
        // "Nothing answers at the configured localhost address": a free port stands for a machine
        // without Redis (6379 may well answer here).
        int nothingThere = FreePorts.find();
        int ownerHttpPort = FreePorts.find();
        List<String> ownerArgs = List.of("--spring.data.redis.port=" + nothingThere);

        // 1. The first instance starts an embedded Redis on a free port and says so in a WARN line.
        ChildJvm owner = start("owner", ownerHttpPort, ownerArgs);
        Matcher warn = owner.awaitLine(EMBEDDED_STARTED, START_UP);
        assertThat(Integer.parseInt(warn.group(1))).isEqualTo(nothingThere);
        int embeddedPort = Integer.parseInt(warn.group(2));
        assertThat(embeddedPort).isNotEqualTo(nothingThere);
        System.out.println("owner (pid " + owner.pid() + ") logged: " + warn.group().trim());

        // 2. A second instance with --spring.data.redis.port=<that port> uses it (starting it
        // while the first one is still starting up saves a JVM start-up of test time).
        ChildJvm survivor = start("survivor", FreePorts.find(), List.of("--spring.data.redis.port=" + embeddedPort));
        owner.awaitLine(STARTED, START_UP);
        survivor.awaitLine(STARTED, START_UP);
        assertThat(survivor.output()).as("the second instance uses the first one's Redis")
                .contains("Using the Redis at localhost:" + embeddedPort)
                .doesNotContain("started an embedded Redis");
        assertThat(survivor.descendants()).as("no redis-server of its own").isEmpty();
        assertThat(owner.descendants()).as("the owner runs the embedded redis-server").isNotEmpty();

        // 3. They share the limits: 12 reports at once, half on each, never more than 3 inside,
        // counted fleet-wide by the sample's own in-flight counter (in the shared Redis).
        List<CompletableFuture<HttpResponse<String>>> reports = new ArrayList<>();
        for (int i = 0; i < CONCURRENT_REPORTS; i++) {
            reports.add(postAsync(i % 2 == 0 ? owner : survivor, "/reports?title=shared-" + i));
        }
        for (CompletableFuture<HttpResponse<String>> report : reports) {
            assertThat(report.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        String inFlightSeenByOwner = get(owner, "/reports/in-flight").body();
        String inFlightSeenBySurvivor = get(survivor, "/reports/in-flight").body();
        long max = Long.parseLong(field(inFlightSeenBySurvivor, "max"));
        System.out.println(CONCURRENT_REPORTS + " concurrent reports over both instances: at most " + max
                + " inside at once (limit " + PERMITS + ")");
        assertThat(max).as("the fleet-wide maximum of reports inside at once").isBetween(1L, (long) PERMITS);
        assertThat(inFlightSeenByOwner).as("both count in the same Redis").isEqualTo(inFlightSeenBySurvivor);

        // 4. The owner stops (SIGTERM, as `kill` or a service manager sends; Spring closes its
        // context) and its Redis with it.
        owner.stop();
        long ownerGone = System.nanoTime();
        assertThat(FreePorts.isListening("127.0.0.1", embeddedPort)).as("the embedded Redis stopped with its owner")
                .isFalse();
        assertThat(owner.output()).contains("Started SampleApplication");

        // 5. The survivor answers every guarded call with 503, within the Redis timeout, and no
        // Retry-After (the sample configures none, so that a 429 refused at once carries the one
        // computed from its predicted wait); its health turns DOWN; it starts no Redis of its own.
        Call first503 = await("the survivor answers 503").atMost(START_UP).pollInterval(Duration.ofMillis(100))
                .until(() -> call(survivor, "POST", GUARDED), call -> call.status() == 503);
        long millisTo503 = millisSince(ownerGone);
        System.out.printf("survivor answered 503 %d ms after the owner exited (that call took %d ms)%n",
                millisTo503, first503.millis());
        List<Call> unavailable = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            unavailable.add(call(survivor, "POST", GUARDED));
            unavailable.add(call(survivor, "POST", GUARDED_EXPORT));
        }
        for (Call call : unavailable) {
            assertThat(call.status()).as("%s", call).isEqualTo(503);
            assertThat(call.retryAfter()).as("Retry-After of %s: none configured", call).isNull();
            // within the bound, plus however late the machine let a timer of this JVM run meanwhile
            noise.assertTookLessThan("duration of " + call, call.startNanos(), call.endNanos(),
                    UNAVAILABLE_ANSWER_BOUND);
        }
        System.out.println("guarded calls while Redis was gone: " + unavailable);
        await("the survivor's health turns DOWN").atMost(START_UP)
                .untilAsserted(() -> assertThat(get(survivor, "/actuator/health").body())
                        .contains("\"status\":\"DOWN\""));
        assertThat(survivor.descendants()).as("the survivor starts no Redis of its own").isEmpty();
        assertThat(FreePorts.isListening("127.0.0.1", embeddedPort)).as("nobody answers at the old port").isFalse();
        assertThat(survivor.output()).doesNotContain("started an embedded Redis");

        // 6. A restarted first instance does not bring it back: a new embedded Redis, on a new port.
        ChildJvm restarted = start("restarted-owner", ownerHttpPort, ownerArgs);
        Matcher restartedWarn = restarted.awaitLine(EMBEDDED_STARTED, START_UP);
        int newEmbeddedPort = Integer.parseInt(restartedWarn.group(2));
        System.out.println("restarted owner logged: " + restartedWarn.group().trim());
        assertThat(newEmbeddedPort).as("the restarted owner's embedded Redis").isNotEqualTo(embeddedPort);
        restarted.awaitLine(STARTED, START_UP);
        assertThat(call(restarted, "POST", GUARDED).status()).as("the restarted owner runs on its new Redis")
                .isEqualTo(200);
        Call stillDown = call(survivor, "POST", GUARDED);
        assertThat(stillDown.status()).as("the survivor after the owner's restart: %s", stillDown).isEqualTo(503);
        assertThat(FreePorts.isListening("127.0.0.1", embeddedPort)).isFalse();
        restarted.stop();
        assertThat(FreePorts.isListening("127.0.0.1", newEmbeddedPort)).as("its Redis stopped with it too")
                .isFalse();

        // 7. The survivor recovers by itself once a Redis answers at that port again: at Lettuce's
        // next reconnect attempt, whose delay doubles from 1 ms up to 30 s while Redis is gone.
        RedisServer back = RedisServers.startOn(embeddedPort);
        started.add(back);
        long redisBack = System.nanoTime();
        await("the survivor answers 200 again").atMost(START_UP).pollInterval(Duration.ofMillis(100))
                .until(() -> call(survivor, "POST", GUARDED).status() == 200);
        long millisTo200 = millisSince(redisBack);
        System.out.printf("survivor answered 200 %d ms after a Redis answered at port %d again "
                + "(no Redis there for %d ms)%n", millisTo200, embeddedPort,
                TimeUnit.NANOSECONDS.toMillis(redisBack - ownerGone));
        assertThat(call(survivor, "POST", GUARDED_EXPORT).status()).isEqualTo(200);
        await("the survivor's health turns UP").atMost(START_UP)
                .untilAsserted(() -> assertThat(get(survivor, "/actuator/health").body())
                        .contains("\"status\":\"UP\""));
        assertThat(survivor.descendants()).isEmpty();
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * Starts an instance in a JVM of its own. {@code java -jar app.jar} runs {@code SampleApplication}
     * on the jar's nested class path; here the test JVM's class path stands in for it, so the test
     * needs no packaged jar (the {@code test} phase builds none) and runs the code just compiled.
     * That class path also holds the test classes and the core's logback-test.xml, so the log
     * layout differs from the jar's; the messages are the same.
     */
    private ChildJvm start(String name, int httpPort, List<String> instanceArgs) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"),
                SampleApplication.class.getName(),
                "--server.port=" + httpPort));
        command.addAll(instanceArgs);
        command.add("--distributed-semaphore.key-prefix=" + keyPrefix);
        command.add("--spring.data.redis.timeout=" + REDIS_TIMEOUT.toSeconds() + "s");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        // Spring reads SPRING_* environment variables (SPRING_DATA_REDIS_URL would win over the port).
        builder.environment().keySet().removeIf(variable -> variable.startsWith("SPRING_"));
        Files.createDirectories(LOGS);
        PrintWriter log = new PrintWriter(Files.newBufferedWriter(LOGS.resolve(name + ".log"), StandardCharsets.UTF_8),
                true);
        ChildJvm child = new ChildJvm(name, builder.start(), httpPort, log);
        started.add(child);
        return child;
    }

    private static CompletableFuture<HttpResponse<String>> postAsync(ChildJvm instance, String path) {
        return HTTP.sendAsync(request(instance, "POST", path), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(ChildJvm instance, String path) {
        return send(request(instance, "GET", path));
    }

    private static Call call(ChildJvm instance, String method, String path) {
        long start = System.nanoTime();
        HttpResponse<String> response = send(request(instance, method, path));
        return new Call(method + " " + path, response.statusCode(),
                response.headers().firstValue("Retry-After").orElse(null), start, System.nanoTime());
    }

    private static HttpRequest request(ChildJvm instance, String method, String path) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + instance.httpPort() + path))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(60))
                .build();
    }

    private static HttpResponse<String> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** @return the value of a number field of a small JSON object */
    private static String field(String json, String name) {
        Matcher matcher = Pattern.compile("\"" + name + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertThat(matcher.find()).as("field %s in %s", name, json).isTrue();
        return matcher.group(1);
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    /** One HTTP call: what came back and how long it took. */
    private record Call(String request, int status, String retryAfter, long startNanos, long endNanos) {

        long millis() {
            return TimeUnit.NANOSECONDS.toMillis(endNanos - startNanos);
        }

        @Override
        public String toString() {
            return request + " -> " + status + " (Retry-After " + retryAfter + ", " + millis() + " ms)";
        }
    }

    /**
     * A sample instance in a child JVM. Its output is drained into a file and kept for matching (an
     * undrained pipe would block the child). Closing stops it like {@link #stop()}, then kills
     * whatever it started that is still running: its embedded redis-server would outlive a JVM that
     * had to be killed.
     */
    private static final class ChildJvm implements AutoCloseable {

        private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

        private final String name;
        private final Process process;
        private final int httpPort;
        private final List<String> lines = new CopyOnWriteArrayList<>();
        private final List<ProcessHandle> children = new CopyOnWriteArrayList<>();

        ChildJvm(String name, Process process, int httpPort, PrintWriter log) {
            this.name = name;
            this.process = process;
            this.httpPort = httpPort;
            Thread drain = new Thread(() -> drain(log), "drain-" + name);
            drain.setDaemon(true);
            drain.start();
        }

        private void drain(PrintWriter file) {
            try (file; BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                    lines.add(line);
                    file.println(line);
                }
            } catch (IOException e) {
                // The stream closes when the process ends.
            }
        }

        long pid() {
            return process.pid();
        }

        int httpPort() {
            return httpPort;
        }

        String output() {
            return String.join("\n", lines);
        }

        /** @return the processes it started that still run (an embedded redis-server, for instance) */
        List<ProcessHandle> descendants() {
            List<ProcessHandle> now = process.descendants().toList();
            children.addAll(now);
            return now;
        }

        /** @return the first line of its output matching {@code pattern}, waiting for it up to {@code timeout} */
        Matcher awaitLine(Pattern pattern, Duration timeout) {
            return await(name + " logs " + pattern).atMost(timeout).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        for (String line : lines) {
                            Matcher matcher = pattern.matcher(line);
                            if (matcher.find()) {
                                return matcher;
                            }
                        }
                        assertThat(process.isAlive()).as("%s is running; its output:%n%s", name, tail()).isTrue();
                        return null;
                    }, matcher -> matcher != null);
        }

        /** Stops it as Ctrl-C would (SIGTERM: Spring closes its context) and waits until it has exited. */
        void stop() throws InterruptedException {
            descendants();
            process.destroy();
            assertThat(process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("%s exits after SIGTERM; its output:%n%s", name, tail()).isTrue();
        }

        private String tail() {
            List<String> all = List.copyOf(lines);
            return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
        }

        @Override
        public void close() throws InterruptedException {
            descendants();
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                }
            }
            for (ProcessHandle child : children) {
                if (child.isAlive()) {
                    System.out.println("cleanup: killing " + child.pid() + " left behind by " + name);
                    child.destroyForcibly();
                }
            }
        }

        @Override
        public String toString() {
            return name + " (pid " + process.pid() + ", port " + httpPort + ")";
        }
    }
}
