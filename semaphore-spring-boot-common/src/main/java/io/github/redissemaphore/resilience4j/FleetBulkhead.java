package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.ReportedUsage;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.event.BulkheadOnCallFinishedEvent;
import io.github.resilience4j.bulkhead.event.BulkheadOnCallPermittedEvent;
import io.github.resilience4j.bulkhead.event.BulkheadOnCallRejectedEvent;
import io.github.resilience4j.core.exception.AcquirePermissionCancelledException;

import java.util.Map;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A Resilience4j semaphore {@link Bulkhead} whose permits are those of a distributed semaphore of the
 * same name: at most {@code maxConcurrentCalls} calls inside across every JVM of the fleet, a caller
 * waiting up to {@code maxWaitDuration} in arrival order (fair) for a permit from any of them.
 * Resilience4j's contract otherwise: {@link BulkheadFullException} on refusal, the permitted,
 * rejected and finished events, and {@link #getMetrics() metrics} that Resilience4j's meters read,
 * here the fleet's figures. How a permit is found again on {@link #onComplete()}: {@link HeldPermits}.
 */
public final class FleetBulkhead implements Bulkhead {

    private static final Log log = LogFactory.getLog(FleetBulkhead.class);

    private final String name;
    private final BulkheadConfig config;
    private final Map<String, String> tags;
    private final RedisSemaphore semaphore;
    private final HeldPermits held = new HeldPermits();
    private final FleetBulkheadEvents events = new FleetBulkheadEvents();
    private final Metrics metrics = new FleetMetrics();

    /**
     * @param name      the bulkhead's name, which is the semaphore's
     * @param config    Resilience4j's configuration of it, of which {@code semaphore} was made
     * @param tags      Resilience4j's tags of it (its meters carry them)
     * @param semaphore the distributed semaphore backing it
     */
    public FleetBulkhead(String name, BulkheadConfig config, Map<String, String> tags, RedisSemaphore semaphore) {
        this.name = name;
        this.config = config;
        this.tags = Map.copyOf(tags);
        this.semaphore = semaphore;
    }

    /**
     * Not supported: the limit is the fleet's, so one JVM changing it alone would make the JVMs
     * disagree. Change it for the whole fleet at run time through the {@code semaphores} Actuator
     * endpoint ({@code POST /actuator/semaphores/{name}} with {@code {"limit": N}}), or in the configuration.
     */
    @Override
    public void changeConfig(BulkheadConfig newConfig) {
        throw new UnsupportedOperationException("Bulkhead '" + name + "' is backed by a distributed semaphore, whose"
                + " limit is the fleet's: set it for every JVM with POST /actuator/semaphores/" + name
                + " {\"limit\": N}, or in the configuration");
    }

    @Override
    public boolean tryAcquirePermission() {
        Optional<Permit> permit;
        try {
            permit = semaphore.tryAcquire(1, config.getMaxWaitDuration());
        } catch (InterruptedException e) {
            // as Resilience4j's bulkhead: an interrupted wait is a refusal, and the thread stays interrupted
            Thread.currentThread().interrupt();
            permit = Optional.empty();
        }
        if (permit.isPresent()) {
            held.add(permit.get());
            events.publish(() -> new BulkheadOnCallPermittedEvent(name));
            return true;
        }
        events.publish(() -> new BulkheadOnCallRejectedEvent(name));
        return false;
    }

    @Override
    public void acquirePermission() {
        if (tryAcquirePermission()) {
            return;
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new AcquirePermissionCancelledException();
        }
        throw BulkheadFullException.createBulkheadFullException(this);
    }

    @Override
    public void releasePermission() {
        release("releasePermission");
    }

    @Override
    public void onComplete() {
        release("onComplete");
        events.publish(() -> new BulkheadOnCallFinishedEvent(name));
    }

    private void release(String by) {
        if (!held.releaseOne()) {
            log.debug("Bulkhead '" + name + "': " + by + " without a permit held in this JVM, nothing to release");
        }
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public BulkheadConfig getBulkheadConfig() {
        return config;
    }

    @Override
    public Metrics getMetrics() {
        return metrics;
    }

    @Override
    public Map<String, String> getTags() {
        return tags;
    }

    @Override
    public EventPublisher getEventPublisher() {
        return events;
    }

    /** @return the semaphore backing this bulkhead */
    public RedisSemaphore semaphore() {
        return semaphore;
    }

    /** @return how many permits this JVM holds for calls inside this bulkhead */
    public int permitsHeldHere() {
        return held.size();
    }

    @Override
    public String toString() {
        return "FleetBulkhead '" + name + "' (distributed semaphore '" + semaphore.name() + "')";
    }

    /**
     * The fleet's figures as the newest Redis reply of this semaphore told this JVM: every call to
     * Redis returns them, so a meter scrape costs no Redis call. Before the first call, the
     * configured limit, all free.
     */
    private final class FleetMetrics implements Metrics {

        @Override
        public int getAvailableConcurrentCalls() {
            @Nullable ReportedUsage usage = semaphore.localState().reportedUsage();
            return usage != null ? usage.available() : semaphore.settings().permits();
        }

        @Override
        public int getMaxAllowedConcurrentCalls() {
            @Nullable ReportedUsage usage = semaphore.localState().reportedUsage();
            return usage != null ? usage.limit() : semaphore.settings().permits();
        }
    }
}
