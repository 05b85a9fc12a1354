package io.github.redissemaphore.concurrencylimit;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.resilience.annotation.ConcurrencyLimit;

/**
 * What one {@code @ConcurrencyLimit} method (or class) is guarded by: the semaphore's name and
 * settings, its policy, how long a call may wait. Resolved once per method, at start-up where the
 * bean is created, so a wrong limit stops the start-up; the semaphore itself is made at the first call
 * (no Redis, no registry while the beans are being created).
 */
final class LimitedMethod {

    private final String semaphoreName;
    private final int permits;
    private final ConcurrencyLimit.ThrottlePolicy policy;
    private final Duration maxWait;
    private volatile @Nullable RedisSemaphore semaphore;

    /**
     * @param semaphoreName the semaphore, see {@link SemaphoreNaming}
     * @param permits       the annotation's limit
     * @param policy        the annotation's policy
     * @param maxWait       how long a call waits: 0 for REJECT
     */
    LimitedMethod(String semaphoreName, int permits, ConcurrencyLimit.ThrottlePolicy policy, Duration maxWait) {
        this.semaphoreName = semaphoreName;
        this.permits = permits;
        this.policy = policy;
        this.maxWait = maxWait;
    }

    String semaphoreName() {
        return semaphoreName;
    }

    int permits() {
        return permits;
    }

    ConcurrencyLimit.ThrottlePolicy policy() {
        return policy;
    }

    Duration maxWait() {
        return maxWait;
    }

    /**
     * @return the semaphore, made in {@code registry} at the first call: the settings of
     *         {@code distributed-semaphore.semaphores.<name>} (else the defaults) with the limit as permits
     */
    RedisSemaphore semaphore(Supplier<SemaphoreRegistry> registry) {
        RedisSemaphore made = semaphore;
        if (made == null) {
            SemaphoreRegistry semaphores = registry.get();
            SemaphoreSettings settings = semaphores.settingsOf(semaphoreName).withPermits(permits).withWaitTime(maxWait);
            made = semaphores.semaphore(semaphoreName, settings);
            semaphore = made;
        }
        return made;
    }
}
