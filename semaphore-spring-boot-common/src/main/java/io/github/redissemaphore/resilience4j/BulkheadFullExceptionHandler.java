package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.web.ProblemAnswers;
import io.github.resilience4j.bulkhead.BulkheadFullException;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers Resilience4j's {@link BulkheadFullException} in a Spring MVC or WebFlux application as the
 * starter answers its own refusals: {@code 429 Too Many Requests} as a problem detail naming the
 * bulkhead (which is the semaphore's name) in {@code semaphore}, with the configured
 * {@code Retry-After} if any. Only with the Resilience4j drop-in on, and with the lowest precedence:
 * a handler of the application's own answers instead, as it did before.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class BulkheadFullExceptionHandler {

    private final @Nullable Duration retryAfter;

    /** @param retryAfter {@code distributed-semaphore.problem-details.retry-after}; null for none */
    public BulkheadFullExceptionHandler(@Nullable Duration retryAfter) {
        this.retryAfter = retryAfter;
    }

    /** The bulkhead refused the call: 429. */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> full(BulkheadFullException e) {
        return ProblemAnswers.tooManyRequests(e.getBulkheadName(), e.getMessage(), retryAfter);
    }
}
