package io.github.redissemaphore.sample.boot3;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import redis.embedded.RedisServer;

/**
 * The demo on Spring Boot 3.5: two instances of {@link ReportsApplication} on one Redis, a burst of
 * {@value #CALLS} calls spread over both, {@value #PERMITS} permits. It passes (exit status 0) when
 * no more calls ran at once than there are permits, every call got its report or a 429 problem,
 * and the starter's {@code semaphores} endpoint answers. Redis is the one on
 * {@code --spring.data.redis.port} (6379 if not given); where none answers there, the demo starts
 * the redis-server of the embedded-redis artifact on that port.
 */
public final class Boot3Demo {

    private static final int PERMITS = 3;
    private static final int CALLS = 24;
    private static final String PORT_ARGUMENT = "--spring.data.redis.port=";

    private Boot3Demo() {
    }

    /** @param arguments {@code --spring.data.redis.port=N} at most */
    public static void main(String[] arguments) throws Exception {
        int port = 6379;
        for (String argument : arguments) {
            if (argument.startsWith(PORT_ARGUMENT)) {
                port = Integer.parseInt(argument.substring(PORT_ARGUMENT.length()));
            }
        }
        RedisServer embedded = null;
        if (!answers(port)) {
            System.out.println("No Redis answers on port " + port + ": starting the embedded one there");
            embedded = RedisServer.newRedisServer().port(port).bind("127.0.0.1").build();
            embedded.start();
        }
        int status;
        try {
            status = run(port);
        } finally {
            if (embedded != null) {
                embedded.stop();
            }
        }
        System.exit(status);
    }

    private static int run(int redisPort) throws Exception {
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        try {
            for (String name : List.of("A", "B")) {
                instances.add(new SpringApplicationBuilder(ReportsApplication.class).run("--server.port=0",
                        "--spring.application.name=boot3-demo-" + name,
                        "--spring.data.redis.port=" + redisPort,
                        "--distributed-semaphore.key-prefix=boot3-demo",
                        "--distributed-semaphore.semaphores.reports.permits=" + PERMITS,
                        "--distributed-semaphore.semaphores.reports.wait-time=1s",
                        "--management.endpoints.web.exposure.include=health,semaphores"));
            }
            return burst(instances);
        } finally {
            instances.forEach(instance -> SpringApplication.exit(instance));
        }
    }

    private static int burst(List<ConfigurableApplicationContext> instances) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int call = 0; call < CALLS; call++) {
            calls.add(http.sendAsync(get(instances.get(call % instances.size()), "/reports"),
                    HttpResponse.BodyHandlers.ofString()));
        }
        int reports = 0;
        int refused = 0;
        for (CompletableFuture<HttpResponse<String>> call : calls) {
            HttpResponse<String> answer = call.get();
            if (answer.statusCode() == 200) {
                reports++;
            } else if (answer.statusCode() == 429 && answer.headers().firstValue("Content-Type").orElse("")
                    .startsWith("application/problem+json")) {
                refused++;
            } else {
                System.out.println("FAIL: an unexpected answer " + answer.statusCode() + ": " + answer.body());
                return 1;
            }
        }
        HttpResponse<String> endpoint = http.send(get(instances.get(0), "/actuator/semaphores/reports"),
                HttpResponse.BodyHandlers.ofString());
        int most = ReportsApplication.MOST_INSIDE.get();
        System.out.printf("%d calls over 2 instances, %d permits: %d reports, %d answered 429, at most %d at once;"
                + " /actuator/semaphores/reports: %d%n", CALLS, PERMITS, reports, refused, most,
                endpoint.statusCode());
        if (most > PERMITS || reports == 0 || endpoint.statusCode() != 200) {
            System.out.println("FAIL: the limit did not hold, or nothing ran, or the endpoint did not answer.");
            return 1;
        }
        System.out.println("PASS: the limit held on Spring Boot 3.5, across 2 instances.");
        return 0;
    }

    private static HttpRequest get(ConfigurableApplicationContext instance, String path) {
        String port = instance.getEnvironment().getProperty("local.server.port");
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).build();
    }

    private static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
