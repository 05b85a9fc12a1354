package io.github.redissemaphore.web;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * How the starter writes a problem detail's answer, once for every handler of its own and of the
 * drop-ins (Resilience4j's {@code BulkheadFullException}, the fleet-wide {@code @ConcurrencyLimit}'s
 * refusal): the status the problem carries, and a {@code Retry-After} in whole seconds when there
 * is one.
 */
public final class ProblemAnswers {

    private ProblemAnswers() {
    }

    /**
     * @param retryAfterSeconds the header's value, whole seconds; null for no header
     * @return {@code problem}, answered with its own status
     */
    public static ResponseEntity<ProblemDetail> answer(ProblemDetail problem, @Nullable String retryAfterSeconds) {
        ResponseEntity.BodyBuilder answer = ResponseEntity.status(problem.getStatus());
        if (retryAfterSeconds != null) {
            answer.header(HttpHeaders.RETRY_AFTER, retryAfterSeconds);
        }
        return answer.body(problem);
    }

    /**
     * @param semaphore  the semaphore that refused, named in the detail and in {@code semaphore}
     * @param why        what refused it, in the refusal's own words
     * @param retryAfter {@code distributed-semaphore.problem-details.retry-after}; null for none
     * @return a {@code 429 Too Many Requests} of a refusal that carries no figures of its own
     */
    public static ResponseEntity<ProblemDetail> tooManyRequests(String semaphore, @Nullable String why,
                                                                @Nullable Duration retryAfter) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS,
                "No permit of semaphore '" + semaphore + "' (" + why + ")");
        problem.setProperty("semaphore", semaphore);
        return answer(problem, retryAfter == null ? null : ComputedRetryAfter.inWholeSeconds(retryAfter));
    }
}
