package io.github.redissemaphore.starter;

import io.github.redissemaphore.actuate.health.SemaphoresHealthIndicator;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;

/**
 * What the starter's tests need of Spring Boot that differs between Boot lines, here for Boot 4:
 * the tests that hold on every line reach those APIs only through this class, so the Boot 3 starter
 * runs the same test sources against its own {@code BootLine}.
 */
public final class BootLine {

    /** Boot's Redis auto-configuration. */
    public static final Class<?> REDIS_AUTO_CONFIGURATION = DataRedisAutoConfiguration.class;
    /** Boot's Micrometer metrics auto-configuration. */
    public static final Class<?> METRICS_AUTO_CONFIGURATION = MetricsAutoConfiguration.class;
    /** The "type" of a problem detail that has none (about:blank) as Spring writes it: null when left out. */
    public static final @Nullable String BLANK_PROBLEM_TYPE = null;
    /** Boot's Micrometer observation auto-configuration. */
    public static final Class<?> OBSERVATION_AUTO_CONFIGURATION = ObservationAutoConfiguration.class;

    private BootLine() {
    }

    /** @return the status code of the semaphores health contributor now, e.g. "UP" */
    public static String status(SemaphoresHealthIndicator indicator) {
        return indicator.health().getStatus().getCode();
    }

    /** @return the details of the semaphores health contributor now */
    public static Map<String, Object> details(SemaphoresHealthIndicator indicator) {
        return indicator.health().getDetails();
    }

    /** Imports Boot's Redis auto-configuration, next to a class's other {@code @ImportAutoConfiguration}. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @ImportAutoConfiguration(DataRedisAutoConfiguration.class)
    public @interface ImportRedisAutoConfiguration {
    }
}
