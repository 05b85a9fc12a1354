package io.github.redissemaphore.sample.exports;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.sample.SampleProperties;
import io.github.redissemaphore.sample.SimulatedWork;
import io.github.redissemaphore.sample.inflight.InFlightCounter;

import java.time.Instant;
import java.util.UUID;

import org.springframework.stereotype.Service;

/**
 * Exports a tenant's data, with two limits across the fleet (semaphore {@code exports:<tenant>},
 * with the settings of {@code exports}): 2 exports per tenant at a time, and 3 of all tenants
 * together. A tenant that floods queues behind its own 2, and the others are still served: a permit
 * the cap frees goes to the waiting tenant that holds the fewest. A call waits up to 10 s, then 429.
 */
@Service
public class ExportService {

    /** The semaphore family; each tenant gets {@code exports:<tenant>}. */
    public static final String SEMAPHORE = "exports";

    private final InFlightCounter inFlight;
    private final SampleProperties properties;

    public ExportService(InFlightCounter inFlight, SampleProperties properties) {
        this.inFlight = inFlight;
        this.properties = properties;
    }

    /** @return the semaphore guarding exports of {@code tenant} */
    public static String semaphoreOf(String tenant) {
        return SEMAPHORE + ":" + tenant;
    }

    /** Runs only while holding the permit of {@code exports:<tenant>}, and one of the cap of all tenants. */
    @DistributedSemaphore(value = SEMAPHORE, key = "#tenant")
    public Export export(String tenant) {
        Instant startedAt = Instant.now();
        // counted per tenant and for all tenants together: the demo checks both limits
        try (InFlightCounter.Entry ofTheTenant = inFlight.enter(semaphoreOf(tenant));
             InFlightCounter.Entry ofAll = inFlight.enter(SEMAPHORE)) {
            SimulatedWork.perform(properties.exportWork());
        }
        return new Export(UUID.randomUUID().toString(), tenant, properties.instanceName(), startedAt, Instant.now());
    }
}
