package io.github.redissemaphore.web;

import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers the semaphores' exceptions in a Spring MVC or WebFlux application (the same advice serves
 * both) as RFC 9457 problem details: {@link SemaphoreRejectedException}, no permit within the wait,
 * is {@code 429 Too Many Requests}; {@link SemaphoreUnavailableException}, Redis unreachable or the
 * application shutting down, is {@code 503 Service Unavailable}. Each names the semaphore in the
 * {@code semaphore} member. A 503 carries a short {@code cause} a client may show ("Redis did not
 * answer in time", "Redis refused a command the semaphore needs", ...); the full message, which
 * names servers, users and ACL rules, is for the log: the library logs it at WARN, once a minute per
 * semaphore and cause, and this handler every call at DEBUG.
 *
 * <p>It has the lowest precedence: a handler of the controller itself, or any advice of the
 * application that handles the exception (one for {@code Exception} included), answers instead.
 *
 * <p>{@code Retry-After} is sent only with a figure the application gives: nothing the library
 * knows tells when a permit will be free (a lease of a busy holder is renewed for as long as its
 * call runs, so the earliest lease end says nothing) or when Redis will answer again.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class SemaphoreExceptionHandler {

    private static final Log logger = LogFactory.getLog(SemaphoreExceptionHandler.class);

    private final @Nullable String retryAfterSeconds;

    /**
     * @param retryAfter what both answers advise in {@code Retry-After}, rounded up to whole seconds;
     *                   null for no {@code Retry-After}
     */
    public SemaphoreExceptionHandler(@Nullable Duration retryAfter) {
        this.retryAfterSeconds = retryAfter == null ? null
                : String.valueOf(Math.max(1, (retryAfter.toMillis() + 999) / 1000));
    }

    /** No permit within the wait: 429, with the permits asked for and how long the call was allowed to wait. */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> rejected(SemaphoreRejectedException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS,
                "No permit of semaphore '" + e.getSemaphoreName() + "' was free within "
                        + e.getWaited().toMillis() + " ms");
        problem.setProperty("semaphore", e.getSemaphoreName());
        problem.setProperty("permits", e.getRequestedPermits());
        problem.setProperty("waitedMillis", e.getWaited().toMillis());
        return answer(problem);
    }

    /** Redis unavailable, or the application shutting down: 503. */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> unavailable(SemaphoreUnavailableException e) {
        logger.debug("Answering 503 Service Unavailable", e);
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                e.getSemaphoreName().map(name -> "Semaphore '" + name + "' is unavailable").orElse("Unavailable")
                        + "; try again later");
        e.getSemaphoreName().ifPresent(name -> problem.setProperty("semaphore", name));
        problem.setProperty("cause", UnavailableCause.of(e).text());
        return answer(problem);
    }

    private ResponseEntity<ProblemDetail> answer(ProblemDetail problem) {
        ResponseEntity.BodyBuilder answer = ResponseEntity.status(problem.getStatus());
        if (retryAfterSeconds != null) {
            answer.header(HttpHeaders.RETRY_AFTER, retryAfterSeconds);
        }
        return answer.body(problem);
    }
}
