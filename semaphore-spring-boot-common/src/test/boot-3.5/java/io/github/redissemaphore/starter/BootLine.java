package io.github.redissemaphore.starter;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;

/**
 * What the shared tests need of Spring Boot that differs between Boot lines, here for Boot 3.5: the
 * tests of semaphore-spring-boot-common (its src/test/java) reach those APIs only through this class,
 * so they compile against Boot 3.5 here (the common module and the Boot 3 starter add this directory)
 * and against Boot 4 with the Boot 4 starter's {@code BootLine}.
 */
public final class BootLine {

    /** Boot's Redis auto-configuration. */
    public static final Class<?> REDIS_AUTO_CONFIGURATION = RedisAutoConfiguration.class;
    /** Boot's Micrometer metrics auto-configuration. */
    public static final Class<?> METRICS_AUTO_CONFIGURATION = MetricsAutoConfiguration.class;
    /** The "type" of a problem detail that has none (about:blank) as Spring writes it: null when left out. */
    public static final @Nullable String BLANK_PROBLEM_TYPE = "about:blank";
    /** Boot's Micrometer observation auto-configuration. */
    public static final Class<?> OBSERVATION_AUTO_CONFIGURATION = ObservationAutoConfiguration.class;

    private BootLine() {
    }

    /** Imports Boot's Redis auto-configuration, next to a class's other {@code @ImportAutoConfiguration}. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @ImportAutoConfiguration(RedisAutoConfiguration.class)
    public @interface ImportRedisAutoConfiguration {
    }
}
