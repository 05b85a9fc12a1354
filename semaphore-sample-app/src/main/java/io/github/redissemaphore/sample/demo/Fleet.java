package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.sample.SampleApplication;
import io.github.redissemaphore.sample.embedded.EmbeddedRedisEnvironmentPostProcessor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Several instances of the service in this JVM, each a full application context with its own web
 * server on a random port, its own semaphore registry and Redis connections: to the library they
 * are separate members of a fleet that share only the Redis.
 */
final class Fleet implements AutoCloseable {

    private final List<Instance> instances;

    private Fleet(List<Instance> instances) {
        this.instances = instances;
    }

    /**
     * Starts {@code size} instances, one after the other (the first may start the embedded Redis,
     * which the others then share).
     *
     * @param keyPrefix the Redis key prefix of this run, so it never meets other users of the Redis
     * @param heartbeat where to say which instance is up, and what is starting meanwhile
     * @param args      command-line arguments for every instance, e.g. {@code --spring.data.redis.port=6380}
     */
    static Fleet start(int size, String keyPrefix, Heartbeat heartbeat, String... args) {
        List<Instance> started = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                String name = String.valueOf((char) ('A' + i));
                heartbeat.doing("starting instance " + name);
                long startNanos = System.nanoTime();
                Instance instance = new Instance(name, new SpringApplicationBuilder(SampleApplication.class)
                        .environment(environment(name, keyPrefix))
                        .run(args));
                started.add(instance);
                heartbeat.out().printf("Instance %s: %s (started in %.1f s)%n", name, instance.baseUri(),
                        (System.nanoTime() - startNanos) / 1e9);
            }
            heartbeat.doing(null);
            return new Fleet(List.copyOf(started));
        } catch (RuntimeException e) {
            new Fleet(started).close();
            throw e;
        }
    }

    /**
     * The demo's settings for one instance, in a property source above application.yml but below the
     * command line, so that the caller's arguments still win.
     */
    private static StandardEnvironment environment(String name, String keyPrefix) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("demo", Map.of(
                "server.port", 0,
                "sample.instance-name", name,
                "distributed-semaphore.key-prefix", keyPrefix,
                "spring.main.banner-mode", "off",
                "spring.main.log-startup-info", false,
                // The demo's own output tells the story, one line per instance and one for the Redis
                // it found or started; the instances only speak when something goes wrong.
                "logging.level.root", "WARN",
                "logging.level.io.github.redissemaphore.sample.embedded", "ERROR")));
        return environment;
    }

    List<Instance> instances() {
        return instances;
    }

    Instance first() {
        return instances.get(0);
    }

    /** @return where the fleet's Redis is, for the output */
    String redisDescription() {
        Environment environment = first().context().getEnvironment();
        return EmbeddedRedisEnvironmentPostProcessor.embeddedRedisUri(environment)
                .map(uri -> "embedded, " + uri)
                .orElseGet(() -> environment.getProperty("spring.data.redis.url",
                        "redis://" + environment.getProperty("spring.data.redis.host") + ":"
                                + environment.getProperty("spring.data.redis.port")));
    }

    /** Closes the instances, last started first (the first may own the embedded Redis). */
    @Override
    public void close() {
        List<Instance> reversed = new ArrayList<>(instances);
        Collections.reverse(reversed);
        reversed.forEach(instance -> instance.context().close());
    }
}
