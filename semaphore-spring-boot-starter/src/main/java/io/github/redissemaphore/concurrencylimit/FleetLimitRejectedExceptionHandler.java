package io.github.redissemaphore.concurrencylimit;

import io.github.redissemaphore.web.ProblemAnswers;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a refusal of the fleet-wide {@code @ConcurrencyLimit} ({@link FleetLimitRejectedException})
 * as the starter answers its own: {@code 429 Too Many Requests}, a problem detail naming the
 * semaphore, the configured {@code Retry-After} if any. Spring's own rejections (of
 * {@code @Retryable}, or without the switch) are left as they are; an application's own handler
 * answers first (lowest precedence).
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class FleetLimitRejectedExceptionHandler {

    private final @Nullable Duration retryAfter;

    /** @param retryAfter {@code distributed-semaphore.problem-details.retry-after}; null for none */
    public FleetLimitRejectedExceptionHandler(@Nullable Duration retryAfter) {
        this.retryAfter = retryAfter;
    }

    /** The fleet-wide limit refused the call: 429. */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> rejected(FleetLimitRejectedException e) {
        return ProblemAnswers.tooManyRequests(e.getSemaphoreName(), e.getMessage(), retryAfter);
    }
}
