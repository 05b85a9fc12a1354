package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * What one registry (one JVM, as a rule) has noticed of other JVMs configured with other permits,
 * across its semaphores: which mismatches it has warned about. Kept here, not per semaphore,
 * because keyed semaphores ({@code "exports:<tenant>"}) share their configuration: during a
 * rolling deploy every tenant's semaphore sees the same other value, and the registry forgets and
 * re-creates idle keyed semaphores; a WARN per semaphore instance would flood the log. One WARN
 * per base name and other value, for the life of the registry: the set is as small as the
 * configuration (names times the values ever deployed).
 */
final class LimitMismatches implements LimitMismatch.Warnings {

    /**
     * How long another configured limit is shown after it was last seen, at least: a finished
     * deploy's value leaves the endpoint after this. See {@link #forgetAfter}.
     */
    static final Duration MIN_FORGET_AFTER = Duration.ofMinutes(1);
    private static final int LEASES_TO_FORGET = 3;

    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private volatile LongSupplier nanoClock = System::nanoTime;

    /** @return the mismatch tracker of one semaphore, sharing this registry's warnings */
    LimitMismatch of(String name, String baseName, SemaphoreSettings settings) {
        return new LimitMismatch(name, baseName, settings.permits(), forgetAfter(settings), this);
    }

    /** @return the mismatch tracker of the cap of the capped semaphore {@code baseName} (its total permits) */
    LimitMismatch ofCap(String baseName, SemaphoreSettings settings) {
        return new LimitMismatch(baseName, baseName, settings.totalPermits(), forgetAfter(settings), this, true);
    }

    /**
     * How long an other configured limit counts after a reply last showed it: 3 x max(lease time,
     * 1 min). A reply shows the configured limit of the call just before it, so a JVM sees another
     * one's value only when its call follows one of the other's; a JVM that holds permits calls at
     * least every third of a lease (renewal), and callers are many, so an instance still running
     * shows up many times in that window. Three leases, and never under three minutes, keeps the
     * entry through the quiet spells of a deploy that is still going on, and drops the value of
     * one that has finished a few minutes after its last instance went.
     */
    static Duration forgetAfter(SemaphoreSettings settings) {
        Duration lease = settings.leaseTime().compareTo(MIN_FORGET_AFTER) > 0 ? settings.leaseTime() : MIN_FORGET_AFTER;
        return lease.multipliedBy(LEASES_TO_FORGET);
    }

    @Override
    public boolean firstWarning(String baseName, int other) {
        return warned.add(baseName + '\u0000' + other);
    }

    @Override
    public long nanoTime() {
        return nanoClock.getAsLong();
    }

    /** For tests: a clock that can be moved on, instead of waiting minutes. */
    void nanoClock(LongSupplier clock) {
        this.nanoClock = clock;
    }
}
