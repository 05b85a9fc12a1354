package io.github.redissemaphore.sample.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.test.FreePorts;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.bootstrap.DefaultBootstrapContext;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Ahead-of-time processing ({@code spring-boot:process-aot}) runs the application at build time to
 * read its bean definitions; the sample must not start a Redis for that, even with none around.
 */
class EmbeddedRedisAotProcessingTest {

    @AfterEach
    void endProcessing() {
        System.clearProperty(AbstractAotProcessor.AOT_PROCESSING);
    }

    @Test
    void duringAheadOfTimeProcessingNoRedisIsStartedAndTheConfigurationStaysAsItIs() {
        int nothingThere = FreePorts.find();
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test", Map.of(
                "spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", nothingThere)));
        System.setProperty(AbstractAotProcessor.AOT_PROCESSING, "true");

        new EmbeddedRedisEnvironmentPostProcessor(new DeferredLogs(), new DefaultBootstrapContext())
                .postProcessEnvironment(environment, new SpringApplication());

        assertThat(environment.getPropertySources().contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE))
                .isFalse();
        assertThat(EmbeddedRedisServers.join(RedisAddress.configured(environment).orElseThrow()))
                .as("no embedded Redis for this address").isEmpty();
    }
}
