package io.github.redissemaphore.security;

import io.github.redissemaphore.core.SemaphoreListener;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts, per semaphore, the leases that renewals of one application instance extended, as the
 * registry tells its listeners ({@link SemaphoreListener#leasesRenewed}): a test that checks a
 * lease is held past its lease time waits for renewals it has seen, rather than sleeping and
 * trusting that one ran.
 */
class Renewals implements SemaphoreListener {

    private final Map<String, AtomicInteger> leases = new ConcurrentHashMap<>();

    @Override
    public void leasesRenewed(String semaphore, int count) {
        leases.computeIfAbsent(semaphore, name -> new AtomicInteger()).addAndGet(count);
    }

    /** @return the leases of {@code semaphore} renewals have extended so far */
    int of(String semaphore) {
        AtomicInteger count = leases.get(semaphore);
        return count == null ? 0 : count.get();
    }

    /** @return the time since a {@link System#nanoTime()} reading */
    static Duration since(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos);
    }
}
