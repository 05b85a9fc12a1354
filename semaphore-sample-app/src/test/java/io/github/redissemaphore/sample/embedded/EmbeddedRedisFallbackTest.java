package io.github.redissemaphore.sample.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.sample.SampleApplication;
import io.github.redissemaphore.sample.SampleHttp;
import io.github.redissemaphore.test.FreePorts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * The sample starts on a machine without Redis: with nothing at its configured (local) address it
 * runs on an embedded Redis it started, says so, serves requests, and stops that Redis with the
 * context. With a live Redis configured, it uses that one.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension.class)
class EmbeddedRedisFallbackTest {

    @Test
    void withNothingAtTheConfiguredAddressItRunsOnAnEmbeddedRedis(CapturedOutput output) {
        // A port nobody listens on stands for "no Redis on this machine" (6379 may be taken here).
        int nothingThere = FreePorts.find();
        int embeddedPort;
        try (ConfigurableApplicationContext app = start("--spring.data.redis.host=127.0.0.1",
                "--spring.data.redis.port=" + nothingThere)) {
            Environment environment = app.getEnvironment();
            embeddedPort = environment.getRequiredProperty("spring.data.redis.port", Integer.class);
            assertThat(embeddedPort).isNotEqualTo(nothingThere);
            assertThat(EmbeddedRedisEnvironmentPostProcessor.embeddedRedisUri(environment))
                    .hasValue("redis://127.0.0.1:" + embeddedPort);
            assertThat(output).contains("No Redis answered at 127.0.0.1:" + nothingThere,
                    "started an embedded Redis on 127.0.0.1:" + embeddedPort);

            SampleHttp http = SampleHttp.of(app);
            assertThat(http.post("/reports?title=offline").statusCode()).isEqualTo(200);
            assertThat(http.post("/tenants/acme/exports").statusCode()).isEqualTo(200);
            assertThat(http.get("/actuator/health").body()).contains("\"status\":\"UP\"");
        }
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(FreePorts.isListening("127.0.0.1", embeddedPort))
                        .as("the embedded Redis stops with the context").isFalse());
    }

    @Test
    void withALiveRedisConfiguredItUsesThatRedis(RedisServer redis) {
        try (ConfigurableApplicationContext app = start("--spring.data.redis.url=" + redis.uri(),
                "--distributed-semaphore.key-prefix=" + redis.keyPrefix())) {
            assertThat(EmbeddedRedisEnvironmentPostProcessor.embeddedRedisUri(app.getEnvironment())).isEmpty();
            assertThat(SampleHttp.of(app).post("/reports?title=shared").statusCode()).isEqualTo(200);
            // The sample's own counters of the call are in the configured Redis.
            assertThat(redis.keys(redis.keyPrefix() + ":sample:{reports}:*")).isNotEmpty();
        }
    }

    private static ConfigurableApplicationContext start(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "--server.port=0";
        System.arraycopy(args, 0, all, 1, args.length);
        return new SpringApplicationBuilder(SampleApplication.class).run(all);
    }
}
