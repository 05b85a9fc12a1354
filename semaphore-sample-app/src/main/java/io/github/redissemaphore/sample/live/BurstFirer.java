package io.github.redissemaphore.sample.live;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.stereotype.Component;

/**
 * Fires a burst of calls at the sample's own endpoints, all at once and spread round-robin over
 * the fleet, so that they take the same path as any client's calls (HTTP, controller, the
 * {@code @DistributedSemaphore} aspect) and a queue forms that the page can show. It returns at
 * once; the calls' outcomes are counted as they come back.
 */
@Component
public class BurstFirer {

    /** Longer than the longest wait for a permit (reports wait up to 10 s) plus the work. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final AtomicLong fired = new AtomicLong();
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    /**
     * Sends {@code calls} POSTs to {@code path} (e.g. {@code /reports?title=burst}), call i to
     * {@code members[i % size]}.
     */
    public void fire(List<FleetMember> members, String path, int calls) {
        for (int i = 0; i < calls; i++) {
            URI uri = URI.create(members.get(i % members.size()).url() + path);
            fired.incrementAndGet();
            client.sendAsync(HttpRequest.newBuilder(uri).timeout(CALL_TIMEOUT)
                            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding())
                    .whenComplete((response, error) -> count(error == null ? response.statusCode() : -1));
        }
    }

    private void count(int status) {
        if (status == 200) {
            served.incrementAndGet();
        } else if (status == 429) {
            rejected.incrementAndGet();
        } else {
            failed.incrementAndGet();
        }
    }

    /** @return the outcomes of every burst this instance fired so far */
    public BurstCounts counts() {
        long servedNow = served.get();
        long rejectedNow = rejected.get();
        long failedNow = failed.get();
        // Read last: a call that completes meanwhile shows as still in progress, never as negative.
        long firedNow = fired.get();
        return new BurstCounts(firedNow, servedNow, rejectedNow, failedNow,
                firedNow - servedNow - rejectedNow - failedNow);
    }

    /**
     * What came of the bursts fired from one instance.
     *
     * @param fired      calls sent
     * @param served     answered 200
     * @param rejected   answered 429: no permit in time
     * @param failed     any other answer, or no answer
     * @param inProgress sent and not answered yet (waiting for a permit, or working)
     */
    public record BurstCounts(long fired, long served, long rejected, long failed, long inProgress) {
    }
}
