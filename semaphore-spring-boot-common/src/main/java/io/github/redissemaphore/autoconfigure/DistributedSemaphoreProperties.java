package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.WhenUnavailable;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.validation.Valid;
import org.hibernate.validator.constraints.Range;
import org.hibernate.validator.constraints.time.DurationMax;
import org.hibernate.validator.constraints.time.DurationMin;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.core.Ordered;
import org.springframework.validation.annotation.Validated;

/**
 * Configuration of the distributed semaphores, under {@code distributed-semaphore}. Every value
 * is checked when the application starts: a value out of range stops it with a message naming
 * the property and the allowed range, and so does a property this type has no place for (a typo,
 * reported with the closest known property). Environment variables and JVM system properties are
 * not checked for unknown names: the environment holds many variables no application binds. (The
 * parameter descriptions below become the configuration metadata that IDEs show, hence their style.)
 *
 * @param enabled         Whether to auto-configure the semaphore registry, the
 *                        DistributedSemaphore aspect, the metrics and the endpoint.
 * @param keyPrefix       Prefix of every Redis key and channel the semaphores use. 1 to 200
 *                        characters without '{', '}', whitespace or control characters.
 * @param redisTimeout    The longest any Redis call of the semaphores may take, whatever
 *                        "spring.data.redis.timeout" says (that one applies instead where it is
 *                        shorter): past it the call fails with SemaphoreUnavailableException, and
 *                        a caller queued for a permit stops waiting once Redis has not answered for
 *                        this long. 100ms to 1m.
 * @param defaults        Settings of every semaphore not listed under "semaphores".
 * @param semaphores      Settings per semaphore name; each value left out is taken from
 *                        "defaults", but total-permits, which only a semaphore has. Names follow
 *                        the rules of "key-prefix".
 * @param aspectOrder     Order of the DistributedSemaphore advice among the other advice of a
 *                        bean (lower is further outside). The default, LOWEST_PRECEDENCE - 1,
 *                        puts it around Transactional and Cacheable advice (LOWEST_PRECEDENCE),
 *                        so a permit is taken before a transaction opens and given back after it
 *                        ends.
 * @param waiterHeartbeat How long a waiting caller stays queued without a heartbeat from its JVM,
 *                        so that a crashed JVM stops blocking the queue after it. 1s to 1h, and
 *                        at least twice "waiter-tick".
 * @param waiterTick      How often a JVM with waiting callers refreshes their heartbeats and
 *                        catches grants whose message was lost. 50ms to 1h.
 * @param metrics         The semaphores' Micrometer meters.
 * @param problemDetails  The answers of a Spring MVC or WebFlux application to a call refused for
 *                        want of a permit (429) or because Redis is unavailable (503).
 * @param unguardableMethods What to do at start-up about a DistributedSemaphore annotation that no
 *                        call can reach: on a private, static or final method, on a method the bean's
 *                        interface-based proxy does not expose, or on a bean the aspect does not
 *                        advise. "fail" stops the start-up naming each such method and why; "warn"
 *                        logs the same as a WARN and lets those methods run unguarded.
 * @param resilience4j    Resilience4j's semaphore bulkheads backed by the semaphores of the same name.
 * @param concurrencyLimit Spring Framework 7's ConcurrencyLimit methods guarded fleet-wide.
 */
// ignoreUnknownFields = false: a typo such as semaphores.pricing.permit stops the start-up instead
// of leaving the setting at its default; Boot checks every property under the prefix against this type.
@ConfigurationProperties(prefix = DistributedSemaphoreProperties.PREFIX, ignoreUnknownFields = false)
@Validated
@HeartbeatOutlastsTicks
@TotalPermitsCoverPermits
@LocalPermitsWithinPermits
@RateComesWithPeriod
public record DistributedSemaphoreProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("semaphore") @SemaphoreName String keyPrefix,
        @DefaultValue("2s") @DurationMin(millis = 100, message = BETWEEN_100MS_AND_1M)
        @DurationMax(minutes = 1, message = BETWEEN_100MS_AND_1M) Duration redisTimeout,
        @DefaultValue @Valid Defaults defaults,
        Map<@SemaphoreName String, @Valid Semaphore> semaphores,
        @DefaultValue("" + DEFAULT_ASPECT_ORDER) int aspectOrder,
        @DefaultValue("5s") @DurationMin(seconds = 1, message = BETWEEN_1S_AND_1H)
        @DurationMax(hours = 1, message = BETWEEN_1S_AND_1H) Duration waiterHeartbeat,
        @DefaultValue("1s") @DurationMin(millis = 50, message = BETWEEN_50MS_AND_1H)
        @DurationMax(hours = 1, message = BETWEEN_50MS_AND_1H) Duration waiterTick,
        @DefaultValue @Valid Metrics metrics,
        @DefaultValue @Valid ProblemDetails problemDetails,
        @DefaultValue("fail") UnguardableMethodsMode unguardableMethods,
        @DefaultValue @Valid Resilience4j resilience4j,
        @DefaultValue @Valid ConcurrencyLimit concurrencyLimit) {

    /** Where the properties live. */
    static final String PREFIX = "distributed-semaphore";

    /** Read on its own before the rest is bound, see {@code DistributedSemaphoreAutoConfiguration}. */
    static final int DEFAULT_ASPECT_ORDER = Ordered.LOWEST_PRECEDENCE - 1;

    // One message per range, so whichever end is crossed, the message names both.
    private static final String LEASE_RANGE = "must be between 100ms and 24h";
    private static final String WAIT_RANGE = "must be between 0 and 24h";
    private static final String REPLICATION_RANGE = "must be between 1ms and 1m";
    private static final String BETWEEN_1S_AND_1H = "must be between 1s and 1h";
    private static final String BETWEEN_50MS_AND_1H = "must be between 50ms and 1h";
    private static final String BETWEEN_100MS_AND_1M = "must be between 100ms and 1m";
    private static final String RETRY_AFTER_RANGE = "must be between 1ms and 24h";
    /** What a semaphore without total-permits has, in the words of the failure report. */
    private static final String NO_SHARED_CAP = "no shared cap";
    // 0 is not "no cap" here, unlike in SemaphoreSettings: the property is left out for that, so say so
    private static final String TOTAL_PERMITS_RANGE =
            "must be between 1 and " + SemaphoreSettings.MAX_PERMITS + "; leave it out for " + NO_SHARED_CAP;
    /** What a semaphore without max-waiters has, in the words of the failure report. */
    private static final String NO_QUEUE_BOUND = "no bound on the queue";
    // the same as for total-permits: 0 means "no bound" in SemaphoreSettings, leaving the property out does here
    private static final String MAX_WAITERS_RANGE =
            "must be between 1 and " + SemaphoreSettings.MAX_PERMITS + "; leave it out for " + NO_QUEUE_BOUND;
    /** What a semaphore without rate-limit has, in the words of the failure report. */
    private static final String NO_RATE = "no rate limit";
    private static final String RATE_LIMIT_RANGE =
            "must be between 1 and " + SemaphoreSettings.MAX_RATE_LIMIT + "; leave it out for " + NO_RATE;
    private static final String RATE_PERIOD_RANGE = "must be between 100ms and 24h";

    /** What a semaphore without local-permits has, in the words of the failure report. */
    static final String SHARE_OF_THE_FLEET = "a share of the permits among the instances Redis last showed";
    // 0 is "a share of the fleet" in SemaphoreSettings; leaving the property out is, here
    private static final String LOCAL_PERMITS_RANGE =
            "must be between 1 and " + SemaphoreSettings.MAX_PERMITS + "; leave it out for " + SHARE_OF_THE_FLEET;

    public DistributedSemaphoreProperties {
        semaphores = semaphores == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(semaphores));
    }

    /** @return the settings of every semaphore configured by name, gaps filled from the defaults */
    public Map<String, SemaphoreSettings> configuredSettings() {
        SemaphoreSettings fallback = defaults.toSettings();
        Map<String, SemaphoreSettings> settings = new LinkedHashMap<>();
        semaphores.forEach((name, semaphore) -> settings.put(name, semaphore.toSettings(fallback)));
        return settings;
    }

    /**
     * The Resilience4j drop-in (docs/coming-from-resilience4j.md). Read by the auto-configuration's
     * condition too, the binder's way, so a value that is neither true nor false stops the start-up.
     *
     * @param enabled Whether every Resilience4j semaphore bulkhead (Bulkhead annotation, BulkheadRegistry)
     *                is backed by the distributed semaphore of the same name, fleet-wide: maxConcurrentCalls
     *                its permits, maxWaitDuration its wait-time. Needs resilience4j-spring-boot3 or -boot4.
     */
    public record Resilience4j(@DefaultValue("false") boolean enabled) {
    }

    /**
     * The {@code @ConcurrencyLimit} drop-in (docs/coming-from-resilience4j.md), Spring Framework 7 only.
     *
     * @param enabled Whether every ConcurrencyLimit method or class of Spring Framework 7 is guarded by a
     *                distributed semaphore, fleet-wide, with or without EnableResilientMethods. Boot 4
     *                starter only: Spring Framework 6.2 has no ConcurrencyLimit.
     */
    public record ConcurrencyLimit(@DefaultValue("false") boolean enabled) {
    }

    /**
     * The semaphores' Micrometer meters. Bound like every other property, so a value that is not
     * true or false (say {@code flase}) stops the start-up instead of switching the meters off.
     *
     * @param enabled Whether to publish the semaphores' meters (semaphore.*), including the timers
     *                an observation meter handler makes of the semaphore.acquire and semaphore.hold
     *                observations. Their spans stay.
     */
    public record Metrics(@DefaultValue("true") boolean enabled) {
    }

    /**
     * The answers of a web application to the semaphores' exceptions, as RFC 9457 problem details.
     *
     * @param enabled    Whether a Spring MVC or WebFlux application answers SemaphoreRejectedException with
     *                   429 Too Many Requests and SemaphoreUnavailableException with 503 Service Unavailable,
     *                   as problem details naming the semaphore. The application's own exception handlers
     *                   take precedence.
     * @param retryAfter What both answers advise in Retry-After, rounded up to whole seconds. Not set: no
     *                   Retry-After, as the library cannot tell when a permit frees up or Redis answers
     *                   again, but on a 429 whose caller was refused at once with a predicted wait
     *                   (max-waiters, reject-predicted-timeouts): that wait, capped at 60s, plus a random
     *                   jitter of up to a tenth of it or 1s, whichever is more, rounded up to whole
     *                   seconds. 1ms to 24h.
     */
    public record ProblemDetails(
            @DefaultValue("true") boolean enabled,
            @DurationMin(millis = 1, message = RETRY_AFTER_RANGE) @DurationMax(hours = 24, message = RETRY_AFTER_RANGE)
            Duration retryAfter) {
    }

    /** What the start-up does about a DistributedSemaphore annotation the aspect can never apply. */
    public enum UnguardableMethodsMode {

        /** Stop the start-up, naming each method and why. */
        FAIL,

        /** Log a WARN naming each method and why, once per class, and let those methods run unguarded. */
        WARN
    }

    /**
     * Settings of every semaphore not configured by name.
     *
     * @param permits   How many permits a semaphore has, fleet-wide. 1 to 1000000.
     * @param leaseTime How long a permit lives without renewal: a crashed holder's permit comes
     *                  back after it. 100ms to 24h.
     * @param waitTime  How long a caller waits for a permit before it is rejected. 0 (never wait)
     *                  to 24h.
     * @param fair      Whether callers are served strictly in arrival order. When false, a caller
     *                  takes a free permit even while others wait: more throughput, no order.
     * @param autoRenew Whether held permits are renewed every lease-time/3 for as long as they are
     *                  held.
     * @param replicas  How many replicas must acknowledge a grant (Redis WAIT) before the caller
     *                  gets it; a grant they do not acknowledge in time is given back and the
     *                  call fails. 0 (wait for none) to 100.
     * @param replicationTimeout How long a grant waits for those replicas. 1ms to 1m.
     * @param maxWaiters How many callers may wait for a permit of a semaphore at once, across the whole
     *                  fleet (per key for a keyed semaphore): one more is refused at once with
     *                  SemaphoreRejectedException (a 429 over HTTP) instead of queueing. Not set: no bound.
     *                  1 to 1000000.
     * @param rejectPredictedTimeouts Whether a caller whose predicted wait (its place in the queue
     *                  times the average hold, over the permits) is already longer than its wait-time
     *                  is refused at once instead of queueing until it times out. No prediction is
     *                  made before a hold that ended while others waited has been measured.
     * @param whenUnavailable What a call does while Redis cannot be reached: "reject" fails it with
     *                  SemaphoreUnavailableException (a 503 over HTTP), never more than permits; "local"
     *                  takes a permit of this instance's share of the permits, granted by this instance
     *                  alone and written to Redis once it answers again; "allow" runs it unguarded, counted.
     * @param localPermits This instance's share of the permits while Redis cannot be reached
     *                  (when-unavailable "local"; per key for a keyed semaphore). Not set: its part of
     *                  permits among the instances Redis last showed using the semaphore, so that the
     *                  shares add up to at most permits. 1 to permits.
     * @param rateLimit How many permits a semaphore grants in any window of rate-period, across the
     *                  whole fleet (per key for a keyed semaphore), on the Redis server's clock; decided
     *                  with the permits in one atomic step. A caller that does not wait is refused
     *                  (a 429 with the moment the window frees a slot as Retry-After); one that waits is
     *                  granted when the window allows it. Not set: no rate limit. 1 to 100000, with
     *                  rate-period.
     * @param ratePeriod The window of rate-limit, such as 1s or 1m. 100ms to 24h, with rate-limit.
     */
    public record Defaults(
            @DefaultValue("1") @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS) int permits,
            @DefaultValue("30s") @DurationMin(millis = 100, message = LEASE_RANGE)
            @DurationMax(hours = 24, message = LEASE_RANGE) Duration leaseTime,
            @DefaultValue("0s") @DurationMin(millis = 0, message = WAIT_RANGE)
            @DurationMax(hours = 24, message = WAIT_RANGE) Duration waitTime,
            @DefaultValue("true") boolean fair,
            @DefaultValue("true") boolean autoRenew,
            @DefaultValue("0") @Range(min = 0, max = SemaphoreSettings.MAX_REPLICAS) int replicas,
            @DefaultValue("100ms") @DurationMin(millis = 1, message = REPLICATION_RANGE)
            @DurationMax(minutes = 1, message = REPLICATION_RANGE) Duration replicationTimeout,
            @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS, message = MAX_WAITERS_RANGE)
            @WhenLeftOut(NO_QUEUE_BOUND) Integer maxWaiters,
            @DefaultValue("false") boolean rejectPredictedTimeouts,
            @DefaultValue("reject") WhenUnavailable whenUnavailable,
            // at most permits as well: LocalPermitsWithinPermits, which knows the permits of every semaphore
            @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS, message = LOCAL_PERMITS_RANGE)
            @WhenLeftOut(SHARE_OF_THE_FLEET) Integer localPermits,
            @Range(min = 1, max = SemaphoreSettings.MAX_RATE_LIMIT, message = RATE_LIMIT_RANGE)
            @WhenLeftOut(NO_RATE) Integer rateLimit,
            @DurationMin(millis = 100, message = RATE_PERIOD_RANGE) @DurationMax(hours = 24, message = RATE_PERIOD_RANGE)
            Duration ratePeriod) {

        /** @return these values as core settings */
        public SemaphoreSettings toSettings() {
            return new SemaphoreSettings(permits, leaseTime, waitTime, fair, autoRenew, replicas, replicationTimeout)
                    .withMaxWaiters(maxWaiters != null ? maxWaiters : 0)
                    .withRejectPredictedTimeouts(rejectPredictedTimeouts)
                    .withWhenUnavailable(whenUnavailable, localPermits != null ? localPermits : 0)
                    .withRateLimit(rateLimit != null && ratePeriod != null ? rateLimit : 0,
                            rateLimit != null && ratePeriod != null ? ratePeriod : Duration.ZERO);
        }
    }

    /**
     * Settings of one semaphore; each value left out is taken from the defaults.
     *
     * @param permits   How many permits the semaphore has, fleet-wide. 1 to 1000000.
     * @param leaseTime How long a permit lives without renewal. 100ms to 24h.
     * @param waitTime  How long a caller waits for a permit before it is rejected. 0 to 24h.
     * @param fair      Whether callers are served strictly in arrival order.
     * @param autoRenew Whether held permits are renewed for as long as they are held.
     * @param replicas  How many replicas must acknowledge a grant before the caller gets it. 0 to 100.
     * @param replicationTimeout How long a grant waits for those replicas. 1ms to 1m.
     * @param totalPermits A cap over all keys of a keyed semaphore together (a DistributedSemaphore
     *                  with a key, "{@code <name>:<key>}"), while "permits" stays the limit of each key.
     *                  Not set: no shared cap. "permits" to 1000000. A semaphore with a cap is used
     *                  per key only.
     * @param maxWaiters How many callers may wait for a permit of the semaphore at once, across the whole
     *                  fleet; for a keyed semaphore, with or without total-permits, the bound of each key.
     *                  1 to 1000000.
     * @param rejectPredictedTimeouts Whether a caller predicted to wait longer than its wait-time is
     *                  refused at once instead of queueing until it times out.
     * @param whenUnavailable What a call does while Redis cannot be reached: "reject" fails it, "local"
     *                  takes a permit of this instance's share, "allow" runs it unguarded.
     * @param localPermits This instance's share of the semaphore's permits while Redis cannot be reached
     *                  (when-unavailable "local"; per key for a keyed semaphore). 1 to permits.
     * @param rateLimit How many permits the semaphore grants in any window of rate-period, across the
     *                  whole fleet; for a keyed semaphore, per key. 1 to 100000, with rate-period (either
     *                  may come from the defaults). Not with total-permits.
     * @param ratePeriod The window of rate-limit, such as 1s or 1m. 100ms to 24h.
     */
    public record Semaphore(
            @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS) Integer permits,
            @DurationMin(millis = 100, message = LEASE_RANGE) @DurationMax(hours = 24, message = LEASE_RANGE)
            Duration leaseTime,
            @DurationMin(millis = 0, message = WAIT_RANGE) @DurationMax(hours = 24, message = WAIT_RANGE)
            Duration waitTime,
            Boolean fair,
            Boolean autoRenew,
            @Range(min = 0, max = SemaphoreSettings.MAX_REPLICAS) Integer replicas,
            @DurationMin(millis = 1, message = REPLICATION_RANGE) @DurationMax(minutes = 1, message = REPLICATION_RANGE)
            Duration replicationTimeout,
            // no default to inherit: a cap is per semaphore, so defaults.total-permits is an unknown property
            @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS, message = TOTAL_PERMITS_RANGE)
            @WhenLeftOut(NO_SHARED_CAP) Integer totalPermits,
            // left out: the defaults' bound, so no "leave it out" in the message; 1000000 lifts it for one semaphore
            @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS) Integer maxWaiters,
            Boolean rejectPredictedTimeouts,
            WhenUnavailable whenUnavailable,
            // left out: the defaults' share, so no "leave it out" in the message; at most permits: LocalPermitsWithinPermits
            @Range(min = 1, max = SemaphoreSettings.MAX_PERMITS) Integer localPermits,
            @Range(min = 1, max = SemaphoreSettings.MAX_RATE_LIMIT) Integer rateLimit,
            @DurationMin(millis = 100, message = RATE_PERIOD_RANGE) @DurationMax(hours = 24, message = RATE_PERIOD_RANGE)
            Duration ratePeriod) {

        /** @return the settings of this semaphore, values left out taken from {@code defaults} */
        public SemaphoreSettings toSettings(SemaphoreSettings defaults) {
            return new SemaphoreSettings(
                    permits != null ? permits : defaults.permits(),
                    leaseTime != null ? leaseTime : defaults.leaseTime(),
                    waitTime != null ? waitTime : defaults.waitTime(),
                    fair != null ? fair : defaults.fair(),
                    autoRenew != null ? autoRenew : defaults.autoRenew(),
                    replicas != null ? replicas : defaults.replicas(),
                    replicationTimeout != null ? replicationTimeout : defaults.replicationTimeout(),
                    totalPermits != null ? totalPermits : 0,
                    maxWaiters != null ? maxWaiters : defaults.maxWaiters(),
                    rejectPredictedTimeouts != null ? rejectPredictedTimeouts : defaults.rejectPredictedTimeouts(),
                    whenUnavailable != null ? whenUnavailable : defaults.whenUnavailable(),
                    localPermits != null ? localPermits : defaults.localPermits(),
                    rateLimit != null ? rateLimit : defaults.rateLimit(),
                    ratePeriod != null ? ratePeriod : defaults.ratePeriod());
        }
    }
}
