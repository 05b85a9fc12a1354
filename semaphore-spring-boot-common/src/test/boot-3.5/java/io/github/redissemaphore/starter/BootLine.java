package io.github.redissemaphore.starter;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.health.SimpleHttpCodeStatusMapper;
import org.springframework.boot.actuate.health.SimpleStatusAggregator;
import org.springframework.boot.actuate.health.Status;
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

    /**
     * @param order             the status order, as {@code management.endpoint.health.status.order}
     *                          lists it; empty for Boot's default (DOWN, OUT_OF_SERVICE, UP, UNKNOWN)
     * @param componentStatuses the codes of the contributors' statuses
     * @return the code of the overall status Boot's health endpoint makes of them, as its default
     *         status aggregator does
     */
    public static String aggregateHealth(List<String> order, String... componentStatuses) {
        SimpleStatusAggregator aggregator = order.isEmpty() ? new SimpleStatusAggregator()
                : new SimpleStatusAggregator(order);
        return aggregator.getAggregateStatus(Arrays.stream(componentStatuses).map(Status::new)
                .collect(Collectors.toSet())).getCode();
    }

    /** @return the HTTP status Boot's health endpoint answers a health of status {@code code} with, by default */
    public static int healthHttpStatus(String code) {
        return new SimpleHttpCodeStatusMapper().getStatusCode(new Status(code));
    }

    /** Imports Boot's Redis auto-configuration, next to a class's other {@code @ImportAutoConfiguration}. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @ImportAutoConfiguration(RedisAutoConfiguration.class)
    public @interface ImportRedisAutoConfiguration {
    }
}
