package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.sample.inflight.InFlightCounter;
import io.github.redissemaphore.sample.payments.PaymentService;
import io.github.redissemaphore.sample.payments.PaymentService.Payment;

import java.io.PrintStream;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * The demo's payments: a burst of {@code POST /payments} at the instances, against a semaphore with
 * both clauses of a provider's contract, and the check that neither was broken, from what the
 * calls themselves reported (each charge's start and end, by the instances' clock, which is this
 * JVM's) and the sample's own count of calls inside: never more than {@code permits} at once, and
 * in any window of {@code rate-period} less {@value #MARGIN_MS} ms (a call sees its start a little
 * after Redis granted it) at most {@code rate-limit} starts.
 */
final class Payments {

    static final int CALLS = 40;
    static final int CONCURRENCY = 20;
    /** How much later than its grant a charge may see its start. */
    static final long MARGIN_MS = 50;

    private Payments() {
    }

    /** Fires the burst, prints what it found, and returns whether both clauses held and every call was served. */
    static boolean fire(Fleet fleet, PrintStream out) {
        SemaphoreSettings settings = fleet.first().bean(SemaphoreRegistry.class).settingsOf(PaymentService.SEMAPHORE);
        out.printf("Firing %d POST /payments (%d at a time; %d permits and %d per %d ms fleet-wide)...%n", CALLS,
                CONCURRENCY, settings.permits(), settings.rateLimit(), settings.ratePeriod().toMillis());
        InFlightCounter inFlight = fleet.first().bean(InFlightCounter.class);
        inFlight.reset(PaymentService.SEMAPHORE);
        RestClient http = client();
        ConcurrentLinkedQueue<Payment> charged = new ConcurrentLinkedQueue<>();
        List<Instance> instances = fleet.instances();
        List<Call> calls = Burst.fire(CALLS, CONCURRENCY, i -> {
            try {
                Payment payment = http.post().uri(instances.get(i % instances.size()).baseUri() + "/payments")
                        .retrieve().body(Payment.class);
                if (payment == null) {
                    return Call.failed("no body");
                }
                charged.add(payment);
                return Call.served(0);
            } catch (RestClientException e) {
                return Call.failed(e.getMessage());
            }
        }, new Tally());
        long maxInside = inFlight.read(PaymentService.SEMAPHORE).max();
        inFlight.reset(PaymentService.SEMAPHORE);
        List<Long> starts = new ArrayList<>(charged.stream().map(Payment::startedAtMicros).sorted().toList());
        long windowMs = settings.ratePeriod().toMillis() - MARGIN_MS;
        int mostInWindow = mostWithin(starts, windowMs * 1000);
        double seconds = starts.size() > 1 ? (starts.get(starts.size() - 1) - starts.get(0)) / 1e6 : 0;
        // (the first window's grants come at once: the rate is what follows them, over the time it took)
        double achieved = seconds > 0 ? (starts.size() - settings.rateLimit()) / seconds : 0;
        boolean held = maxInside <= settings.permits() && mostInWindow <= settings.rateLimit();
        long failed = calls.stream().filter(call -> call.outcome() != Outcome.SERVED).count();
        out.printf("payments: %d of %d served; at most %d inside at once (permits %d); at most %d starts in any %d ms"
                        + " (rate-limit %d per %d ms); %.1f starts/s after the first window (limit %.1f/s): %s%n",
                starts.size(), CALLS, maxInside, settings.permits(), mostInWindow, windowMs, settings.rateLimit(),
                settings.ratePeriod().toMillis(), achieved,
                settings.rateLimit() * 1000.0 / settings.ratePeriod().toMillis(),
                held ? "both clauses held" : "A CLAUSE WAS BROKEN");
        return held && failed == 0;
    }

    /** @return the most starts within any span shorter than {@code spanMicros} */
    static int mostWithin(List<Long> sortedStarts, long spanMicros) {
        int most = 0;
        int first = 0;
        for (int last = 0; last < sortedStarts.size(); last++) {
            while (sortedStarts.get(last) - sortedStarts.get(first) >= spanMicros) {
                first++;
            }
            most = Math.max(most, last - first + 1);
        }
        return most;
    }

    private static RestClient client() {
        JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build());
        requests.setReadTimeout(Duration.ofSeconds(30));
        return RestClient.builder().requestFactory(requests).build();
    }
}
