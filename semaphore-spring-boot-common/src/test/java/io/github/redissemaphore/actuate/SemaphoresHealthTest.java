package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.WhenUnavailable;
import io.github.redissemaphore.starter.LocalStates;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The status and details of the {@code semaphores} health contributor made from local states alone,
 * as a real registry shows them during an outage (no Redis needed): a degraded semaphore is
 * {@value SemaphoresHealth#DEGRADED} however long its renewals fail, and only a semaphore that works
 * through Redis with its leases at risk makes it DOWN. Each Boot line's indicator:
 * {@code SemaphoresHealthIndicatorTest}.
 */
class SemaphoresHealthTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    /** Longer ago than a third of {@link #LEASE}: renewals failing since then put the leases at risk. */
    private static final Instant LONG_AGO = Instant.now().minus(Duration.ofMinutes(1));

    @Test
    void aDegradedSemaphoreIsDegradedWithItsModeShareAndLocalHolders() {
        SemaphoresHealth health = SemaphoresHealth.of(new LocalStates()
                .put(LocalStates.degraded("outage", WhenUnavailable.LOCAL, 3, 1, 2, LONG_AGO, LEASE))
                .put(LocalStates.throughRedis("calm", 0, null, null)));
        assertThat(health.status()).isEqualTo("DEGRADED");
        assertThat(health.down()).as("its leases at risk are the outage's, not a reason for DOWN").isFalse();
        assertThat(health.degraded()).isTrue();
        assertThat(health.details().get("outage")).isEqualTo(Map.ofEntries(Map.entry("permitsHeld", 1),
                Map.entry("waiters", 0), Map.entry("inboxSubscribed", false),
                Map.entry("renewalFailingSince", LONG_AGO.toString()), Map.entry("leasesAtRisk", true),
                Map.entry("degraded", true), Map.entry("whenUnavailable", "local"),
                Map.entry("degradedSince", LONG_AGO.toString()), Map.entry("localShare", 3),
                Map.entry("localPermitsHeld", 2)));
        assertThat(health.details().get("calm")).isEqualTo(Map.of("permitsHeld", 0, "waiters", 0,
                "inboxSubscribed", true));
    }

    @Test
    void allowHasNoShare() {
        SemaphoresHealth health = SemaphoresHealth.of(new LocalStates()
                .put(LocalStates.degraded("open", WhenUnavailable.ALLOW, 0, 0, 0, LONG_AGO, LEASE)));
        assertThat(health.status()).isEqualTo("DEGRADED");
        assertThat(health.details().get("open")).isEqualTo(Map.of("permitsHeld", 0, "waiters", 0,
                "inboxSubscribed", false, "degraded", true, "whenUnavailable", "allow",
                "degradedSince", LONG_AGO.toString(), "localShare", 0, "localPermitsHeld", 0));
    }

    @Test
    void aSemaphoreThroughRedisWithItsLeasesAtRiskIsDownBesideADegradedOne() {
        SemaphoresHealth health = SemaphoresHealth.of(new LocalStates()
                .put(LocalStates.degraded("outage", WhenUnavailable.LOCAL, 3, 1, 0, LONG_AGO, LEASE))
                .put(LocalStates.throughRedis("stuck", 1, LONG_AGO, LEASE)));
        assertThat(health.status()).isEqualTo("DOWN");
        assertThat(health.degraded()).isTrue();
        assertThat(health.details().get("stuck")).isEqualTo(Map.of("permitsHeld", 1, "waiters", 0,
                "inboxSubscribed", true, "renewalFailingSince", LONG_AGO.toString(), "leasesAtRisk", true));
    }

    @Test
    void withoutADegradedOrEndangeredSemaphoreItIsUp() {
        Instant justNow = Instant.now();
        SemaphoresHealth health = SemaphoresHealth.of(new LocalStates()
                .put(LocalStates.throughRedis("renewing", 1, justNow, Duration.ofHours(1))));
        assertThat(health.status()).as("renewals failing for less than a third of the lease").isEqualTo("UP");
        assertThat(health.degraded()).isFalse();
        assertThat(SemaphoresHealth.of(new LocalStates()).status()).as("nothing used").isEqualTo("UP");
    }
}
