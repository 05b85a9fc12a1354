package io.github.redissemaphore.sample.web;

import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.sample.SampleProperties;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Turns the semaphore's refusals into HTTP answers a client can act on: no permit in time is
 * {@code 429 Too Many Requests}, Redis unreachable is {@code 503 Service Unavailable}; both carry
 * {@code Retry-After} and an RFC 9457 problem body naming the semaphore.
 */
@RestControllerAdvice
public class SemaphoreExceptionAdvice {

    private final String retryAfterSeconds;

    public SemaphoreExceptionAdvice(SampleProperties properties) {
        // Retry-After takes whole seconds; round up so that a client never comes back too early.
        long millis = properties.retryAfter().toMillis();
        this.retryAfterSeconds = String.valueOf(Math.max(1, (millis + 999) / 1000));
    }

    @ExceptionHandler
    public ResponseEntity<ProblemDetail> rejected(SemaphoreRejectedException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, e.getMessage());
        problem.setProperty("semaphore", e.getSemaphoreName());
        problem.setProperty("waitedMillis", e.getWaited().toMillis());
        return answer(problem);
    }

    @ExceptionHandler
    public ResponseEntity<ProblemDetail> unavailable(SemaphoreUnavailableException e) {
        return answer(ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                "The coordination store is unreachable; try again shortly."));
    }

    private ResponseEntity<ProblemDetail> answer(ProblemDetail problem) {
        return ResponseEntity.status(problem.getStatus()).header(HttpHeaders.RETRY_AFTER, retryAfterSeconds).body(problem);
    }
}
