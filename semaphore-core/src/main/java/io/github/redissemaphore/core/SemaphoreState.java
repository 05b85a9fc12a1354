package io.github.redissemaphore.core;

import java.time.Duration;
import java.util.List;

/**
 * A snapshot of one semaphore as Redis holds it.
 *
 * @param name      the semaphore name
 * @param limit     the number of permits
 * @param used      permits held now
 * @param available permits free now
 * @param holders   the leases, across all JVMs
 * @param waiters   the callers waiting, in the order they will be served
 */
public record SemaphoreState(String name, int limit, int used, int available,
                             List<Holder> holders, List<Waiter> waiters) {

    public SemaphoreState {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
    }

    /**
     * One lease.
     *
     * @param permitId       the {@link Permit#id()}
     * @param count          permits it holds
     * @param fencingToken   its fencing token
     * @param owner          host/pid/thread of the JVM that holds it
     * @param leaseRemaining time until the lease ends unless renewed
     */
    public record Holder(String permitId, int count, long fencingToken, String owner, Duration leaseRemaining) {
    }

    /**
     * One waiting caller.
     *
     * @param waiterId id the permit will have once granted
     * @param count    permits it waits for
     * @param owner    host/pid/thread of the JVM that waits
     */
    public record Waiter(String waiterId, int count, String owner) {
    }
}
