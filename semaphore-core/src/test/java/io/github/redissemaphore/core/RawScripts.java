package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.redis.AcquireScript;
import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.CancelScript;
import io.github.redissemaphore.core.internal.redis.CancelScript.Cancelled;
import io.github.redissemaphore.core.internal.redis.LeaseScript;
import io.github.redissemaphore.core.internal.redis.LeaseScript.Leased;
import io.github.redissemaphore.core.internal.redis.OverrideScript;
import io.github.redissemaphore.core.internal.redis.RateOverrideScript;
import io.github.redissemaphore.core.internal.redis.RedisConnections;
import io.github.redissemaphore.core.internal.redis.ReleaseScript;
import io.github.redissemaphore.core.internal.redis.ReleaseScript.Released;
import io.github.redissemaphore.core.internal.redis.RenewScript;
import io.github.redissemaphore.core.internal.redis.RenewScript.Renewed;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.StateScript;
import io.github.redissemaphore.core.internal.redis.Usage;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The scripts called one by one, as a test drives them: each method is one script call through
 * the engine's own {@link ScriptRunner}, waiting for its reply (connections lent on the common pool).
 */
final class RawScripts {

    /**
     * The command timeout the tests give the factory of their script calls: they test what the
     * scripts do, not how fast, and a loaded machine that runs test classes side by side can keep
     * a first call (its connection, the script's first EVAL) past the library's 2 s.
     */
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final ScriptRunner runner;

    RawScripts(RedisConnectionFactory factory) {
        this.runner = new ScriptRunner(new RedisConnections(factory, ForkJoinPool.commonPool()));
    }

    Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, boolean wait, boolean fair,
                     Duration heartbeat, String inbox, String owner) {
        return runner.call(keys, new AcquireScript(limit, id, count, lease, wait, fair, heartbeat, inbox, owner));
    }

    /** An acquire that waits in a queue of at most {@code maxWaiters} (0: no bound). */
    Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, boolean fair,
                     Duration heartbeat, String inbox, String owner, int maxWaiters, Duration longestPredictedWait) {
        return runner.call(keys, new AcquireScript(limit, id, count, lease, true, fair, heartbeat, inbox, owner,
                maxWaiters, longestPredictedWait));
    }

    /** A write-back (acquire.lua mode 4): a holder granted while Redis could not be reached, whatever the limit. */
    Acquired writeBack(SemaphoreKeys keys, int limit, String id, int count, Duration lease, Duration heartbeat,
                       String inbox, String owner) {
        return runner.call(keys, new AcquireScript(limit, id, count, lease, false, false, heartbeat, inbox, owner, 0,
                Duration.ZERO, true));
    }

    Released release(SemaphoreKeys keys, int limit, String id) {
        return runner.call(keys, ReleaseScript.byForce(limit, id));
    }

    Released release(SemaphoreKeys keys, int limit, String id, int keep, String inbox) {
        return runner.call(keys, ReleaseScript.own(limit, id, keep, inbox));
    }

    Released releaseHandingOver(SemaphoreKeys keys, int limit, String id, String inbox) {
        return runner.call(keys, ReleaseScript.handingOver(limit, id, inbox));
    }

    Renewed renew(SemaphoreKeys keys, int limit, Duration heartbeat, String inbox, List<String> ids) {
        return runner.call(keys, new RenewScript(limit, heartbeat, inbox, ids));
    }

    /** A renew that sweeps: ends the unnamed leases of {@code inbox} whose token is below {@code watermark}. */
    Renewed renew(SemaphoreKeys keys, int limit, Duration heartbeat, String inbox, List<String> ids,
                  List<String> spared, long watermark) {
        return runner.call(keys, new RenewScript(limit, heartbeat, inbox, ids, spared, watermark));
    }

    Leased adopt(SemaphoreKeys keys, int limit, String id, String inbox, String owner) {
        return runner.call(keys, LeaseScript.adopt(limit, id, inbox, owner));
    }

    Leased extend(SemaphoreKeys keys, int limit, String id, Duration lease, String inbox) {
        return runner.call(keys, LeaseScript.extend(limit, id, lease, inbox));
    }

    Cancelled cancel(SemaphoreKeys keys, int limit, String id, boolean release) {
        return runner.call(keys, new CancelScript(limit, id, release));
    }

    StateScript.Read state(SemaphoreKeys keys, int limit, int most) {
        return runner.call(keys, new StateScript(keys.name(), keys.name(), limit, most));
    }

    /** override.lua about the rate (R4): {@code rateLimit} 0 clears the runtime rate. */
    Usage overrideRate(SemaphoreKeys keys, int limit, int rateLimit, Duration ratePeriod) {
        return runner.call(keys, new RateOverrideScript(limit, rateLimit, ratePeriod));
    }

    Usage overrideLimit(SemaphoreKeys keys, int limit, int override) {
        return runner.call(keys, new OverrideScript(limit, override));
    }
}
