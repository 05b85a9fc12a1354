package io.github.redissemaphore.sample.reports;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.sample.SampleProperties;
import io.github.redissemaphore.sample.SimulatedWork;
import io.github.redissemaphore.sample.inflight.InFlightCounter;

import java.time.Instant;
import java.util.UUID;

import org.springframework.stereotype.Service;

/**
 * Generates reports: heavy enough that the fleet may run only a few at once (the
 * {@code reports} semaphore, {@code permits: 3} in application.yml). Callers beyond that wait in
 * arrival order up to the configured {@code wait-time}, then get a {@code SemaphoreRejectedException}.
 */
@Service
public class ReportService {

    /** The semaphore name, also the name its calls are counted under. */
    public static final String SEMAPHORE = "reports";

    private final InFlightCounter inFlight;
    private final SampleProperties properties;

    public ReportService(InFlightCounter inFlight, SampleProperties properties) {
        this.inFlight = inFlight;
        this.properties = properties;
    }

    /** Runs only while holding a permit of {@code reports}. */
    @DistributedSemaphore(SEMAPHORE)
    public Report generate(String title) {
        Instant startedAt = Instant.now();
        try (InFlightCounter.Entry entry = inFlight.enter(SEMAPHORE)) {
            SimulatedWork.perform(properties.reportWork());
        }
        return new Report(UUID.randomUUID().toString(), title, properties.instanceName(), startedAt, Instant.now());
    }
}
