package io.github.redissemaphore.web;

import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreRejectedException.Reason;

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
 * first, else one computed from a predicted wait, else none. Over HTTP: {@code ProblemDetailsHttpTestBase}.
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

    private static SemaphoreRejectedException refused(Reason reason, @Nullable Duration predicted) {
        return new SemaphoreRejectedException("reports", 1, WAIT, reason, predicted, "at once");
    }
}
