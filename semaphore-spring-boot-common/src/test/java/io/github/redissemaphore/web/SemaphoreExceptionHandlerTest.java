package io.github.redissemaphore.web;

import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreRejectedException.Reason;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.WhenUnavailable;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * What the 429 of each reason says, and which {@code Retry-After} it carries: the configured one
 * first, else one computed from a predicted wait, else none (1 s for a refusal decided locally); and
 * what a 503 says of the semaphore's {@code when-unavailable}. Over HTTP: {@code ProblemDetailsHttpTestBase}.
 */
class SemaphoreExceptionHandlerTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final SemaphoreExceptionHandler computing =
            new SemaphoreExceptionHandler(null, new ComputedRetryAfter(bound -> 0));

    @Test
    void aFullQueueIsNamedInTheDetailAndTheReasonWithTheComputedRetryAfter() {
        ResponseEntity<ProblemDetail> answer = computing.rejected(refused(Reason.QUEUE_FULL, Duration.ofMillis(2300)));
        assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("3");
        assertThat(answer.getBody().getDetail())
                .isEqualTo("No permit of semaphore 'reports': refused at once, its queue is full (predicted wait 2300 ms)");
        assertThat(answer.getBody().getProperties()).contains(entry("reason", "queue-full"),
                entry("predictedWaitMillis", 2300L), entry("semaphore", "reports"), entry("permits", 1));
    }

    @Test
    void aPredictedWaitTooLongSaysHowLongTheCallerAllowed() {
        ResponseEntity<ProblemDetail> answer =
                computing.rejected(refused(Reason.PREDICTED_WAIT_TOO_LONG, Duration.ofMillis(7200)));
        assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("8");
        assertThat(answer.getBody().getDetail()).isEqualTo("No permit of semaphore 'reports': refused at once, its "
                + "predicted wait is longer than the 5000 ms it allows (predicted wait 7200 ms)");
        assertThat(answer.getBody().getProperties()).contains(entry("reason", "predicted-wait-too-long"));
    }

    @Test
    void aRefusalForTheRateSaysSoWithTheMomentTheWindowFreesASlotAsRetryAfter() {
        ResponseEntity<ProblemDetail> answer = computing.rejected(refused(Reason.RATE_LIMITED, Duration.ofMillis(41200)));
        assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("42");
        assertThat(answer.getBody().getDetail()).isEqualTo("No permit of semaphore 'reports': refused at once, its "
                + "rate limit is reached (predicted wait 41200 ms)");
        assertThat(answer.getBody().getProperties()).contains(entry("reason", "rate-limited"),
                entry("predictedWaitMillis", 41200L));
    }

    @Test
    void withoutAPredictionNoRetryAfterAndNoPredictedWait() {
        ResponseEntity<ProblemDetail> full = computing.rejected(refused(Reason.QUEUE_FULL, null));
        assertThat(full.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNull();
        assertThat(full.getBody().getDetail()).isEqualTo("No permit of semaphore 'reports': refused at once, its queue is full");
        assertThat(full.getBody().getProperties()).doesNotContainKey("predictedWaitMillis");
        ResponseEntity<ProblemDetail> timedOut = computing.rejected(new SemaphoreRejectedException("reports", 1, WAIT));
        assertThat(timedOut.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNull();
        assertThat(timedOut.getBody().getProperties()).contains(entry("reason", "wait-timed-out"));
    }

    @Test
    void aConfiguredRetryAfterWinsOverThePrediction() {
        SemaphoreExceptionHandler configured = new SemaphoreExceptionHandler(Duration.ofSeconds(7));
        assertThat(configured.rejected(refused(Reason.QUEUE_FULL, Duration.ofSeconds(40))).getHeaders()
                .getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("7");
    }

    @Test
    void aRefusalDecidedLocallySaysSoWithARetryAfterOfOneSecondUnlessOneIsConfigured() {
        ResponseEntity<ProblemDetail> answer = computing.rejected(refused(Reason.LOCAL_SHARE_IN_USE, null));
        assertThat(answer.getStatusCode().value()).isEqualTo(429);
        assertThat(answer.getBody().getDetail()).isEqualTo("No permit of semaphore 'reports': decided by this "
                + "instance alone, as Redis could not be reached: its own share of the permits stayed in use for the "
                + "5000 ms the call allowed");
        assertThat(answer.getBody().getProperties()).contains(entry("reason", "local-share-in-use"),
                entry("whenUnavailable", "local"), entry("semaphore", "reports"), entry("waitedMillis", 5000L))
                .doesNotContainKey("predictedWaitMillis");
        assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
        assertThat(new SemaphoreExceptionHandler(Duration.ofSeconds(7)).rejected(refused(Reason.LOCAL_SHARE_IN_USE,
                null)).getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).as("the configured one wins").isEqualTo("7");
        assertThat(computing.rejected(refused(Reason.QUEUE_FULL, null)).getBody().getProperties())
                .as("a refusal through Redis").doesNotContainKey("whenUnavailable");
    }

    @Test
    void aSemaphoreThatRejectsWhileRedisIsOutOfReachSaysSoInItsServiceUnavailable() {
        SemaphoreExceptionHandler handler = new SemaphoreExceptionHandler(null,
                name -> name.equals("reports") ? WhenUnavailable.REJECT : WhenUnavailable.LOCAL);
        for (SemaphoreUnavailableException.Reason reason : new SemaphoreUnavailableException.Reason[] {
                SemaphoreUnavailableException.Reason.UNREACHABLE, SemaphoreUnavailableException.Reason.NO_ANSWER}) {
            ResponseEntity<ProblemDetail> answer = handler.unavailable(unavailable("reports", reason));
            assertThat(answer.getStatusCode().value()).isEqualTo(503);
            assertThat(answer.getBody().getDetail()).isEqualTo("Semaphore 'reports' is unavailable: Redis could not "
                    + "be reached, and its when-unavailable is reject (not local or allow), so every call fails until "
                    + "Redis answers again; try again later");
            assertThat(answer.getBody().getProperties()).contains(entry("whenUnavailable", "reject"),
                    entry("semaphore", "reports"));
        }
    }

    @Test
    void aServiceUnavailableForAnotherCauseOrModeDoesNotNameTheMode() {
        SemaphoreExceptionHandler handler = new SemaphoreExceptionHandler(null,
                name -> name.equals("reports") ? WhenUnavailable.REJECT : WhenUnavailable.LOCAL);
        ResponseEntity<ProblemDetail> refused = handler.unavailable(
                unavailable("reports", SemaphoreUnavailableException.Reason.REFUSED));
        assertThat(refused.getBody().getDetail()).as("Redis answered: no mode applies")
                .isEqualTo("Semaphore 'reports' is unavailable; try again later");
        assertThat(refused.getBody().getProperties()).doesNotContainKey("whenUnavailable");
        assertThat(handler.unavailable(unavailable("exports", SemaphoreUnavailableException.Reason.UNREACHABLE))
                .getBody().getProperties()).as("local").doesNotContainKey("whenUnavailable");
        assertThat(new SemaphoreExceptionHandler(null).unavailable(
                unavailable("reports", SemaphoreUnavailableException.Reason.UNREACHABLE)).getBody().getDetail())
                .as("the mode not known").isEqualTo("Semaphore 'reports' is unavailable; try again later");
    }

    private static SemaphoreUnavailableException unavailable(String semaphore,
                                                             SemaphoreUnavailableException.Reason reason) {
        return new SemaphoreUnavailableException(semaphore, reason, "Redis at 127.0.0.1:6379 failed", null);
    }

    private static SemaphoreRejectedException refused(Reason reason, @Nullable Duration predicted) {
        return new SemaphoreRejectedException("reports", 1, WAIT, reason, predicted, "at once");
    }
}
