package io.github.redissemaphore.starter;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;

/**
 * What the shared tests need of Spring Boot that differs between Boot lines, here for Boot 4: the
 * tests of semaphore-spring-boot-common (its src/test/java), which this starter compiles and runs
 * against Boot 4, reach those APIs only through this class; the common module has the Boot 3.5 one.
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

    /** Imports Boot's Redis auto-configuration, next to a class's other {@code @ImportAutoConfiguration}. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @ImportAutoConfiguration(DataRedisAutoConfiguration.class)
    public @interface ImportRedisAutoConfiguration {
    }
}
