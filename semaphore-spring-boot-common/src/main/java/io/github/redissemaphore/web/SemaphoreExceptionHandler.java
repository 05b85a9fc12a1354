package io.github.redissemaphore.web;

import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.WhenUnavailable;

import java.time.Duration;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers the semaphores' exceptions in a Spring MVC or WebFlux application (the same advice serves
 * both) as RFC 9457 problem details: {@link SemaphoreRejectedException}, no permit (the wait ran
 * out, or the caller was refused at once), is {@code 429 Too Many Requests};
 * {@link SemaphoreUnavailableException}, Redis unreachable or the application shutting down, is
 * {@code 503 Service Unavailable}. Each names the semaphore in the
 * {@code semaphore} member. A 503 carries a short {@code cause} a client may show ("Redis did not
 * answer in time", "Redis refused a command the semaphore needs", ...); the full message, which
 * names servers, users and ACL rules, is for the log: the library logs it at WARN, once a minute per
 * semaphore and cause, and this handler every call at DEBUG.
 *
 * <p>It has the lowest precedence: a handler of the controller itself, or any advice of the
 * application that handles the exception (one for {@code Exception} included), answers instead.
 *
 * <p>A 429 names why the call was refused in its {@code reason} member ({@code wait-timed-out},
 * {@code queue-full}, {@code predicted-wait-too-long}, {@code local-share-in-use}:
 * {@link SemaphoreRejectedException.Reason#tag()}) and in its detail, and, when the semaphore
 * predicted the caller's wait, gives it in {@code predictedWaitMillis}. A refusal with
 * {@code local-share-in-use} was decided by this instance alone while Redis could not be reached
 * ({@code when-unavailable: local}): its detail says so and {@code whenUnavailable} is
 * {@code "local"}, so that nobody reads it as the fleet-wide limit.
 *
 * <p>A 503 because Redis could not be reached (no connection, or no answer in time) of a semaphore
 * whose {@code when-unavailable} is {@code reject} says so in its detail and in a
 * {@code whenUnavailable} member ({@code "reject"}): the operator who reads it learns that the
 * semaphore could go on serving calls on its own ({@code local}) or unguarded ({@code allow}).
 *
 * <p>{@code Retry-After}: a figure the application configures wins, on every answer. Without one,
 * a 429 whose caller was refused at once with a predicted wait advises that wait, capped and
 * jittered ({@link ComputedRetryAfter}); a 429 decided locally advises
 * {@value #LOCAL_REFUSAL_RETRY_AFTER_SECONDS} s: Redis may answer again any moment, and then the
 * fleet-wide permits serve the client again, while a client told nothing may come back at once to a
 * share that is still in use; any other answer has none, as nothing the library knows tells when
 * a permit will be free (a lease of a busy holder is renewed for as long as its call runs, so the
 * earliest lease end says nothing) or when Redis will answer again.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class SemaphoreExceptionHandler {

    private static final Log logger = LogFactory.getLog(SemaphoreExceptionHandler.class);

    /** The {@code Retry-After} of a refusal decided locally when none is configured: see the class comment. */
    static final int LOCAL_REFUSAL_RETRY_AFTER_SECONDS = 1;

    private final @Nullable String retryAfterSeconds;
    private final ComputedRetryAfter computedRetryAfter;
    /** What each semaphore, by name (keyed ones with their key), does while Redis cannot be reached; null: not known. */
    private final Function<String, @Nullable WhenUnavailable> whenUnavailableOf;

    /**
     * An answer that does not know the semaphores' {@code when-unavailable}: a 503 does not name it.
     *
     * @param retryAfter what every answer advises in {@code Retry-After}, rounded up to whole seconds;
     *                   null for a {@code Retry-After} computed from the predicted wait where the
     *                   semaphore gave one, {@value #LOCAL_REFUSAL_RETRY_AFTER_SECONDS} s on a refusal
     *                   decided locally, and none elsewhere
     */
    public SemaphoreExceptionHandler(@Nullable Duration retryAfter) {
        this(retryAfter, name -> null);
    }

    /**
     * @param retryAfter        as {@link #SemaphoreExceptionHandler(Duration)}
     * @param whenUnavailableOf what the semaphore of that name (for a keyed one, with its key) does
     *                          while Redis cannot be reached, as its settings say; null when not known.
     *                          Asked only when an answer is written
     */
    public SemaphoreExceptionHandler(@Nullable Duration retryAfter,
                                     Function<String, @Nullable WhenUnavailable> whenUnavailableOf) {
        this(retryAfter, new ComputedRetryAfter(), whenUnavailableOf);
    }

    SemaphoreExceptionHandler(@Nullable Duration retryAfter, ComputedRetryAfter computedRetryAfter) {
        this(retryAfter, computedRetryAfter, name -> null);
    }

    SemaphoreExceptionHandler(@Nullable Duration retryAfter, ComputedRetryAfter computedRetryAfter,
                              Function<String, @Nullable WhenUnavailable> whenUnavailableOf) {
        this.retryAfterSeconds = retryAfter == null ? null : ComputedRetryAfter.inWholeSeconds(retryAfter);
        this.computedRetryAfter = computedRetryAfter;
        this.whenUnavailableOf = whenUnavailableOf;
    }

    /**
     * No permit: 429, with why, the permits asked for, how long the call was allowed to wait, and
     * the wait the semaphore predicted for it when it gave one.
     */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> rejected(SemaphoreRejectedException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, detail(e));
        problem.setProperty("semaphore", e.getSemaphoreName());
        problem.setProperty("reason", e.reason().tag());
        problem.setProperty("permits", e.getRequestedPermits());
        problem.setProperty("waitedMillis", e.getWaited().toMillis());
        e.retryAfter().ifPresent(predicted -> problem.setProperty("predictedWaitMillis", predicted.toMillis()));
        boolean decidedLocally = e.reason() == SemaphoreRejectedException.Reason.LOCAL_SHARE_IN_USE;
        if (decidedLocally) {
            problem.setProperty("whenUnavailable", WhenUnavailable.LOCAL.tag());
        }
        return ProblemAnswers.answer(problem, retryAfterSeconds != null ? retryAfterSeconds
                : e.retryAfter().map(computedRetryAfter::seconds)
                        .orElse(decidedLocally ? String.valueOf(LOCAL_REFUSAL_RETRY_AFTER_SECONDS) : null));
    }

    /** Redis unavailable, or the application shutting down: 503. */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> unavailable(SemaphoreUnavailableException e) {
        logger.debug("Answering 503 Service Unavailable", e);
        UnavailableCause cause = UnavailableCause.of(e);
        // only reject is named: a semaphore in another mode fails so only before it knows Redis is gone
        boolean rejectedForTheOutage = cause.redisUnreachable()
                && e.getSemaphoreName().map(whenUnavailableOf).orElse(null) == WhenUnavailable.REJECT;
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
                e.getSemaphoreName().map(name -> "Semaphore '" + name + "' is unavailable").orElse("Unavailable")
                        + (rejectedForTheOutage ? ": Redis could not be reached, and its when-unavailable is "
                        + WhenUnavailable.REJECT.tag() + " (not local or allow), so every call fails until Redis "
                        + "answers again" : "")
                        + "; try again later");
        e.getSemaphoreName().ifPresent(name -> problem.setProperty("semaphore", name));
        problem.setProperty("cause", cause.text());
        if (rejectedForTheOutage) {
            problem.setProperty("whenUnavailable", WhenUnavailable.REJECT.tag());
        }
        return ProblemAnswers.answer(problem, retryAfterSeconds);
    }

    /** Why, in words a client may show: "No permit of semaphore 'reports': refused at once, its queue is full". */
    private static String detail(SemaphoreRejectedException e) {
        String semaphore = "No permit of semaphore '" + e.getSemaphoreName() + "'";
        String why = switch (e.reason()) {
            case WAIT_TIMED_OUT -> semaphore + " was free within " + e.getWaited().toMillis() + " ms";
            case QUEUE_FULL -> semaphore + ": refused at once, its queue is full";
            case PREDICTED_WAIT_TOO_LONG -> semaphore + ": refused at once, its predicted wait is longer than the "
                    + e.getWaited().toMillis() + " ms it allows";
            case LOCAL_SHARE_IN_USE -> semaphore + ": decided by this instance alone, as Redis could not be "
                    + "reached: its own share of the permits stayed in use for the " + e.getWaited().toMillis()
                    + " ms the call allowed";
            case RATE_LIMITED -> semaphore + ": refused at once, its rate limit is reached";
        };
        return why + e.retryAfter().map(predicted -> " (predicted wait " + predicted.toMillis() + " ms)").orElse("");
    }
}
