package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.internal.ReplyFigures.CapFigures;
import io.github.redissemaphore.core.internal.ReplyFigures.LimitMismatches;
import io.github.redissemaphore.core.internal.redis.Inbox;
import io.github.redissemaphore.core.internal.redis.ReplicaWait;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;

import org.springframework.scheduling.TaskScheduler;

/**
 * What a registry shares with each of its semaphores: the Redis protocol, the threads, the inbox,
 * and where events go. Handed down once, when a semaphore is made; a semaphore never reaches back
 * into the registry.
 *
 * @param runner          runs the script calls
 * @param replicas        runs a call and the {@code WAIT} for replicas after it
 * @param scheduler       times ticks, deadlines and retries; never runs a Redis call
 * @param retries         the clean-ups to send again, at once when Redis answers again
 * @param callbacks       where replies are handled and whatever may block on Redis runs: never
 *                        Lettuce's I/O threads, never the scheduler
 * @param listeners       the registry's listeners
 * @param observations    the registry's observations
 * @param inbox           where grants reach this JVM
 * @param mismatches      the limit mismatches warned about, across semaphores
 * @param caps            the figures of the caps of capped semaphores, shared by their keys
 * @param waiterHeartbeat how long a waiter stays in the queue without a heartbeat
 * @param waiterTick      how often a JVM with waiters heartbeats them
 * @param closed          whether the registry is closed
 */
record SemaphoreContext(ScriptRunner runner, ReplicaWait replicas, TaskScheduler scheduler, BackgroundCalls.Retries retries,
                        ExecutorService callbacks, Listeners listeners, Observations observations, Inbox inbox,
                        LimitMismatches mismatches, CapFigures caps, Duration waiterHeartbeat, Duration waiterTick,
                        BooleanSupplier closed, Outage outage, FleetShares fleet, LocalCaps localCaps) {

    boolean isClosed() {
        return closed.getAsBoolean();
    }

    /** @throws SemaphoreUnavailableException when the registry is closed */
    void checkOpen() {
        if (isClosed()) {
            throw new SemaphoreUnavailableException(null, Reason.SHUTTING_DOWN, "The semaphore registry is closed",
                    null);
        }
    }
}
