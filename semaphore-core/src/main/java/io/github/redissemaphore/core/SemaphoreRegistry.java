package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.DefaultSemaphoreRegistry;
import io.github.redissemaphore.core.observation.DefaultSemaphoreHoldObservationConvention;
import io.github.redissemaphore.core.observation.DefaultSemaphoreObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreHoldObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.TaskScheduler;
import org.jspecify.annotations.Nullable;

/**
 * The entry point: hands out {@link RedisSemaphore}s by name and owns the machinery they share
 * (one pub/sub inbox per JVM, one renewal tick per busy semaphore). Close it to cancel waits,
 * release held permits and stop.
 */
public interface SemaphoreRegistry extends AutoCloseable {

    /** @return the semaphore of that name, with its configured settings, else the defaults */
    RedisSemaphore semaphore(String name);

    /**
     * @return the semaphore of that name with these settings; a semaphore already in use in this
     *         JVM keeps its settings unless they are equal
     * @throws IllegalArgumentException for an invalid name, or settings that differ from those the
     *                                  semaphore is already used with in this JVM, or settings with
     *                                  a {@link SemaphoreSettings#totalPermits() cap} for a name
     *                                  without a key (a capped semaphore is used per key)
     */
    RedisSemaphore semaphore(String name, SemaphoreSettings settings);

    /**
     * The keyed semaphore {@code "<baseName>:<key>"}, one of a family that shares a base name (one
     * per tenant, say). Observations name it by its base name and carry the key as a
     * high-cardinality value; the registry forgets it while this JVM neither holds nor waits on
     * it. {@link #semaphore(String)} treats {@code "exports:acme"} the same way (base name before
     * the first {@code ':'}) unless that exact name is configured; use this method when the base
     * name has a {@code ':'} of its own. The first use of a name decides.
     *
     * @throws IllegalArgumentException for an invalid name or a null key, or settings that
     *                                  differ from those the semaphore is already used with
     */
    default RedisSemaphore semaphore(String baseName, String key, SemaphoreSettings settings) {
        return semaphore(baseName + ":" + key, settings);
    }

    /**
     * The keyed semaphore {@code "<baseName>:<key>"} with the settings this registry gives
     * {@code baseName} ({@link #settingsOf}), as {@link #semaphore(String, String, SemaphoreSettings)}
     * with those: for a caller that has no settings of its own to hand over.
     *
     * @throws IllegalArgumentException for an invalid name or a null key, or when the semaphore is
     *                                  already used in this JVM with other settings
     */
    default RedisSemaphore semaphore(String baseName, String key) {
        return semaphore(baseName, key, settingsOf(baseName));
    }

    /**
     * The shared cap of the capped semaphore {@code baseName}: its figures of all keys together,
     * its runtime limit, and its keys' semaphores.
     *
     * @throws IllegalArgumentException when {@code baseName} is invalid or has no
     *                                  {@link SemaphoreSettings#totalPermits()} configured
     * @throws UnsupportedOperationException when this implementation has no caps (the default)
     */
    default SemaphoreCap cap(String baseName) {
        throw new UnsupportedOperationException(getClass().getName() + " has no capped semaphores");
    }

    /**
     * What {@code name} stands for here, without making anything for a name this registry does
     * not know: the {@linkplain SemaphoreLookup.Capped cap} when it is the base name of a
     * configured capped semaphore; else the {@linkplain SemaphoreLookup.Found semaphore} when it
     * is used in this JVM, configured by that name, or a key of a configured cap
     * ({@code "exports:acme"}: the registry reads base name and key as {@link #semaphore(String)}
     * does); else {@linkplain SemaphoreLookup.Unknown unknown}, also for an invalid name. No Redis
     * call.
     *
     * @return by default, a semaphore used in this JVM, else unknown: an implementation without
     *         configuration or caps of its own
     */
    default SemaphoreLookup lookup(String name) {
        for (RedisSemaphore semaphore : semaphores()) {
            if (semaphore.name().equals(name)) {
                return new SemaphoreLookup.Found(semaphore);
            }
        }
        return new SemaphoreLookup.Unknown(name);
    }

    /**
     * The semaphore of that name this JVM uses now, if any: unlike {@link #semaphore(String)} and
     * {@link #lookup(String)} it never makes one, not even for a configured name, so a reader that
     * polls (a gauge) neither creates semaphores nor keeps a forgotten one alive. No Redis call.
     *
     * @return the semaphore among {@link #semaphores()} of exactly that name; empty when there is
     *         none (never used here, forgotten, or not a valid name)
     */
    default Optional<RedisSemaphore> inUse(String name) {
        for (RedisSemaphore semaphore : semaphores()) {
            if (semaphore.name().equals(name)) {
                return Optional.of(semaphore);
            }
        }
        return Optional.empty();
    }

    /**
     * @return the settings {@link #semaphore(String)} gives that name: its own configuration, else
     *         that of the part before the first {@code ':'} (so the keyed semaphore
     *         {@code "exports:acme"} inherits {@code "exports"}), else the defaults
     */
    SemaphoreSettings settingsOf(String name);

    /**
     * @return the semaphores used in this JVM so far; keyed ones ({@code "exports:acme"}) that
     *         this JVM neither holds nor waits on are forgotten after a minute, so one semaphore
     *         per tenant does not pile up (a reference kept to one still works; listeners hear
     *         {@link SemaphoreListener#semaphoreForgotten})
     */
    Collection<RedisSemaphore> semaphores();

    /** Cancels every wait, releases every held permit and stops the ticks. Idempotent. */
    @Override
    void close();

    /** @return a builder for plain-Java use, without Spring Boot */
    static Builder builder(RedisConnectionFactory connectionFactory) {
        return new Builder(connectionFactory);
    }

    /** Builds a {@link SemaphoreRegistry}. */
    final class Builder {

        /** The default of {@link #redisTimeout(Duration)}. */
        private static final Duration DEFAULT_REDIS_TIMEOUT = Duration.ofSeconds(2);

        private final RedisConnectionFactory connectionFactory;
        private String keyPrefix = "semaphore";
        private SemaphoreSettings defaults = SemaphoreSettings.DEFAULTS;
        private final Map<String, SemaphoreSettings> configured = new LinkedHashMap<>();
        private @Nullable TaskScheduler taskScheduler;
        private final List<SemaphoreListener> listeners = new ArrayList<>();
        private Duration waiterHeartbeat = Duration.ofSeconds(5);
        private Duration waiterTick = Duration.ofSeconds(1);
        private Duration redisTimeout = DEFAULT_REDIS_TIMEOUT;
        private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;
        private @Nullable SemaphoreObservationConvention observationConvention;
        private @Nullable SemaphoreHoldObservationConvention holdObservationConvention;

        private Builder(RedisConnectionFactory connectionFactory) {
            this.connectionFactory = Objects.requireNonNull(connectionFactory, "connectionFactory");
        }

        /** Prefix of every Redis key and channel; default {@code semaphore}. */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = SemaphoreNames.check("keyPrefix", keyPrefix);
            return this;
        }

        /** Settings of every semaphore not configured by name. */
        public Builder defaults(SemaphoreSettings defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /** Settings of the semaphore of that name. */
        public Builder configure(String name, SemaphoreSettings settings) {
            configured.put(SemaphoreNames.check("name", name), Objects.requireNonNull(settings, "settings"));
            return this;
        }

        /** Scheduler for renewal ticks and wait deadlines; without one the registry makes and owns one. */
        public Builder taskScheduler(TaskScheduler taskScheduler) {
            this.taskScheduler = taskScheduler;
            return this;
        }

        /** Adds a listener, e.g. metrics. */
        public Builder listener(SemaphoreListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * How long a waiter stays in the queue without a heartbeat from its JVM (a JVM that died
         * stops blocking the queue after this); default 5 s, 1 s..1 h, and above the waiter tick.
         */
        public Builder waiterHeartbeat(Duration waiterHeartbeat) {
            this.waiterHeartbeat = waiterHeartbeat;
            return this;
        }

        /**
         * How often a JVM with waiters on a semaphore refreshes their heartbeats and learns of
         * grants whose message was lost; default 1 s, 50 ms..1 h.
         */
        public Builder waiterTick(Duration waiterTick) {
            this.waiterTick = waiterTick;
            return this;
        }

        /**
         * The longest any Redis call of the semaphores may take: a script call (waiting for a
         * connection included), or one that waits for replicas on top of its replication timeout.
         * Past it the call fails with {@link SemaphoreUnavailableException}, and a caller queued for
         * a permit stops waiting once Redis has answered nothing for this long since the first
         * call it left unanswered (a JVM whose only calls are its waiters' heartbeats makes the
         * next one up to a {@linkplain #waiterTick waiter tick} later). Default 2 s,
         * 100 ms..1 min. The connection factory's own command timeout applies instead where it is
         * shorter; a longer one (Lettuce's default is 60 s) no longer holds a call.
         */
        public Builder redisTimeout(Duration redisTimeout) {
            this.redisTimeout = redisTimeout;
            return this;
        }

        /**
         * Where the {@code semaphore.acquire} and {@code semaphore.hold} observations go (spans
         * with a tracing handler, timers with a meter handler); default
         * {@link ObservationRegistry#NOOP}: none.
         */
        public Builder observationRegistry(ObservationRegistry observationRegistry) {
            this.observationRegistry = Objects.requireNonNull(observationRegistry, "observationRegistry");
            return this;
        }

        /** Replaces {@link DefaultSemaphoreObservationConvention} for {@code semaphore.acquire}. */
        public Builder observationConvention(SemaphoreObservationConvention convention) {
            this.observationConvention = convention;
            return this;
        }

        /** Replaces {@link DefaultSemaphoreHoldObservationConvention} for {@code semaphore.hold}. */
        public Builder holdObservationConvention(SemaphoreHoldObservationConvention convention) {
            this.holdObservationConvention = convention;
            return this;
        }

        /** @return a started registry, its inbox subscribed */
        public SemaphoreRegistry build() {
            checkBetween("waiterTick", waiterTick, Duration.ofMillis(50), Duration.ofHours(1));
            checkBetween("waiterHeartbeat", waiterHeartbeat, Duration.ofSeconds(1), Duration.ofHours(1));
            checkBetween("redisTimeout", redisTimeout, Duration.ofMillis(100), Duration.ofMinutes(1));
            if (waiterHeartbeat.compareTo(waiterTick.multipliedBy(2)) < 0) {
                throw new IllegalArgumentException("waiterHeartbeat must be at least twice waiterTick ("
                        + waiterTick.toMillis() + " ms), but was " + waiterHeartbeat.toMillis() + " ms");
            }
            DefaultSemaphoreRegistry registry = new DefaultSemaphoreRegistry(connectionFactory, keyPrefix, defaults,
                    configured, taskScheduler, listeners,
                    waiterHeartbeat, waiterTick, redisTimeout, observationRegistry, observationConvention,
                    holdObservationConvention);
            registry.start();
            return registry;
        }

        private static void checkBetween(String argument, Duration value, Duration min, Duration max) {
            if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
                throw new IllegalArgumentException(argument + " must be between " + min.toMillis() + " ms and "
                        + max.toMillis() + " ms, but was " + (value == null ? "null" : value.toMillis() + " ms"));
            }
        }
    }
}
