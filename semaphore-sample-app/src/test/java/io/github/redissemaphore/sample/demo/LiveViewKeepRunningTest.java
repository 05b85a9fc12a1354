package io.github.redissemaphore.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.sample.SampleHttp;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

/**
 * The end of {@code ./demo.sh --keep-running}: the instances stay up, their live view's URLs are
 * printed and answer with the page, and the wait ends once the instances are stopped.
 */
@RedisTest
class LiveViewKeepRunningTest {

    @Test
    void printsEachInstancesPageAndWaitsUntilTheInstancesStop(RedisServer redis) {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        try (Heartbeat heartbeat = Heartbeat.start(out, Demo.QUIET);
             Fleet fleet = Fleet.start(2, redis.keyPrefix() + ":keep-running", heartbeat,
                     "--spring.data.redis.url=" + redis.uri())) {
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> LiveView.showUntilStopped(fleet, out));

            await().atMost(Duration.ofSeconds(30)).until(() -> printed.toString(StandardCharsets.UTF_8).contains("Ctrl-C"));
            String text = printed.toString(StandardCharsets.UTF_8);
            for (Instance instance : fleet.instances()) {
                assertThat(text).contains("instance " + instance.name() + ": " + instance.baseUri() + "/");
                SampleHttp http = SampleHttp.at(instance.baseUri().getPort());
                assertThat(http.get("/").body()).contains("live.js");
            }
            assertThat(text).as("the endpoint is read-only here: how to get Release buttons")
                    .contains("--management.endpoint.semaphores.access=unrestricted");
            assertThat(waiting).as("still waiting while the instances run").isNotDone();

            fleet.close();
            await().atMost(Duration.ofSeconds(30)).until(waiting::isDone);
        }
    }
}
