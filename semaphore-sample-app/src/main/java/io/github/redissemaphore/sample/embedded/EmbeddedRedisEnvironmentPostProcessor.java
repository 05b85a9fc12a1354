package io.github.redissemaphore.sample.embedded;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.bootstrap.ConfigurableBootstrapContext;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

/**
 * Lets the sample run on a machine with only a JDK: when the configured Redis is on this machine
 * ({@code localhost:6379} unless configured otherwise) and nothing answers there, it starts an
 * {@link EmbeddedRedisServer} on a free port, points {@code spring.data.redis.*} at it and logs a
 * WARN naming the port. Further instances in the same JVM configured with the same address share
 * that server. It stops once the beans of the last context using it are gone, or at JVM exit if no
 * context came up.
 *
 * <p>It never stands in for a remote Redis, nor for Sentinel or Cluster: instances that lose their
 * shared Redis must fail, not each start a private one and stop limiting each other. Turn it off
 * with {@code sample.embedded-redis.enabled=false}.
 *
 * <p>Runs after every other post-processor, so it sees the final configuration (application.yml,
 * command line, environment variables). Does nothing during ahead-of-time processing, which runs
 * the application at build time only to read its bean definitions: no Redis is used then.
 */
public class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

    /** Name of the property source that points the application at the embedded server. */
    public static final String PROPERTY_SOURCE = "embeddedRedis";
    /** Name of the singleton {@link EmbeddedRedisServer} in the context, when one was started. */
    public static final String BEAN_NAME = "embeddedRedisServer";
    static final String ENABLED = "sample.embedded-redis.enabled";

    /** Refused connections come back at once on loopback; the timeout only bounds a hung listener. */
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

    private final Log log;
    private final ConfigurableBootstrapContext bootstrapContext;

    public EmbeddedRedisEnvironmentPostProcessor(DeferredLogFactory logFactory,
            ConfigurableBootstrapContext bootstrapContext) {
        this.log = logFactory.getLog(EmbeddedRedisEnvironmentPostProcessor.class);
        this.bootstrapContext = bootstrapContext;
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        boolean aotProcessing = Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING);
        if (aotProcessing || !environment.getProperty(ENABLED, Boolean.class, true)) {
            return;
        }
        Optional<RedisAddress> configured = RedisAddress.configured(environment);
        if (configured.isEmpty() || !configured.get().isLocal()) {
            return;
        }
        RedisAddress address = configured.get();
        Optional<EmbeddedRedisServers.Lease> joined = EmbeddedRedisServers.join(address);
        if (joined.isEmpty() && address.answers(PROBE_TIMEOUT)) {
            log.info("Using the Redis at " + address);
            return;
        }
        EmbeddedRedisServers.Lease lease = joined.orElseGet(() -> EmbeddedRedisServers.startOrJoin(address));
        EmbeddedRedisServer server = lease.server();
        environment.getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, Map.of(
                // url too: it would win over host and port if the configuration had one
                "spring.data.redis.url", server.uri(),
                "spring.data.redis.host", server.host(),
                "spring.data.redis.port", server.port(),
                "spring.data.redis.ssl.enabled", false)));
        stopWithApplication(lease);
        if (lease.started()) {
            log.warn("No Redis answered at " + address + ": started an embedded Redis on " + server.host() + ":"
                    + server.port() + " for the instances of this JVM. Instances in other processes share it only "
                    + "when started with --spring.data.redis.port=" + server.port() + "; set " + ENABLED
                    + "=false to turn this off.");
        } else {
            log.info("Using the embedded Redis on " + server.host() + ":" + server.port()
                    + ", started by another instance of this JVM for " + address);
        }
    }

    /** @return the URI of the embedded server the application of {@code environment} runs on, if any */
    public static Optional<String> embeddedRedisUri(Environment environment) {
        if (environment instanceof ConfigurableEnvironment configurable
                && configurable.getPropertySources().contains(PROPERTY_SOURCE)) {
            return Optional.ofNullable(environment.getProperty("spring.data.redis.url"));
        }
        return Optional.empty();
    }

    private void stopWithApplication(EmbeddedRedisServers.Lease lease) {
        // Backstop for a start-up that fails before there is a context; Boot runs these handlers
        // after closing its contexts, and close() is idempotent.
        SpringApplication.getShutdownHandlers().add(lease::close);
        bootstrapContext.addCloseListener(event -> bindToContext(event.getApplicationContext(), lease));
    }

    /**
     * Registered before any bean exists, so it is destroyed after all of them: the semaphore
     * registry releases its permits and the connection factory closes while Redis still runs.
     */
    private static void bindToContext(ConfigurableApplicationContext context, EmbeddedRedisServers.Lease lease) {
        DefaultSingletonBeanRegistry beans = (DefaultSingletonBeanRegistry) context.getBeanFactory();
        beans.registerSingleton(BEAN_NAME, lease.server());
        beans.registerDisposableBean(BEAN_NAME, lease::close);
    }
}
