package io.github.redissemaphore.sample.exports;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.sample.SampleProperties;
import io.github.redissemaphore.sample.SimulatedWork;
import io.github.redissemaphore.sample.inflight.InFlightCounter;

import java.time.Instant;
import java.util.UUID;

import org.springframework.stereotype.Service;

/**
 * Exports a tenant's data: one export per tenant at a time across the fleet (semaphore
 * {@code exports:<tenant>}, with the settings of {@code exports}: 1 permit, no wait), while
 * different tenants export side by side. A second export of a busy tenant is refused at once.
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

    /** Runs only while holding the permit of {@code exports:<tenant>}. */
    @DistributedSemaphore(value = SEMAPHORE, key = "#tenant")
    public Export export(String tenant) {
        Instant startedAt = Instant.now();
        try (InFlightCounter.Entry entry = inFlight.enter(semaphoreOf(tenant))) {
            SimulatedWork.perform(properties.exportWork());
        }
        return new Export(UUID.randomUUID().toString(), tenant, properties.instanceName(), startedAt, Instant.now());
    }
}
