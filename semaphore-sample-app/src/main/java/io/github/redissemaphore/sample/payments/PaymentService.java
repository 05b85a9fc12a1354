package io.github.redissemaphore.sample.payments;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.sample.SimulatedWork;
import io.github.redissemaphore.sample.inflight.InFlightCounter;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import org.springframework.stereotype.Service;

/**
 * Charges through a payment provider whose contract says "5 calls at once and 10 per second":
 * the {@code payments} semaphore keeps both clauses fleet-wide ({@code permits} and
 * {@code rate-limit}/{@code rate-period} in application.yml). Each charge reports when it started
 * and ended by this clock, so a client can check both clauses without asking the library.
 */
@Service
public class PaymentService {

    /** The semaphore name, also the name its calls are counted under. */
    public static final String SEMAPHORE = "payments";
    /** How long one simulated call to the provider takes. */
    private static final Duration PROVIDER_CALL = Duration.ofMillis(100);

    private final InFlightCounter inFlight;

    public PaymentService(InFlightCounter inFlight) {
        this.inFlight = inFlight;
    }

    /** Runs only while holding a permit of {@code payments}, one of its rate's slots spent. */
    @DistributedSemaphore(SEMAPHORE)
    public Payment charge() {
        long startedAt = micros();
        try (InFlightCounter.Entry entry = inFlight.enter(SEMAPHORE)) {
            SimulatedWork.perform(PROVIDER_CALL);
        }
        return new Payment(startedAt, micros());
    }

    private static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    /**
     * One charge.
     *
     * @param startedAtMicros when the call to the provider began (epoch µs), once a permit and a slot were had
     * @param endedAtMicros   when it was done
     */
    public record Payment(long startedAtMicros, long endedAtMicros) {
    }
}
