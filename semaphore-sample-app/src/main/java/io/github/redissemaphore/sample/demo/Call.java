package io.github.redissemaphore.sample.demo;

import org.jspecify.annotations.Nullable;

/**
 * The result of one HTTP call of the demo.
 *
 * @param outcome      how it ended
 * @param waitedMillis how long a served call waited for its permit (a report's as the server measured it, an
 *                     export's from sending to its start); 0 otherwise
 * @param detail       for a refused call, the reason its 429 named ({@code queue-full}); for a failed one, what
 *                     went wrong
 * @param retryAfterSeconds the {@code Retry-After} of a refused call; null when it had none (no hold measured yet)
 */
public record Call(Outcome outcome, long waitedMillis, @Nullable String detail, @Nullable Integer retryAfterSeconds) {

    static Call served(long waitedMillis) {
        return new Call(Outcome.SERVED, waitedMillis, "", null);
    }

    static Call refused(String reason, @Nullable Integer retryAfterSeconds) {
        return new Call(Outcome.REFUSED, 0, reason, retryAfterSeconds);
    }

    static Call rejected() {
        return new Call(Outcome.REJECTED, 0, "", null);
    }

    static Call failed(@Nullable String detail) {
        return new Call(Outcome.FAILED, 0, detail, null);
    }
}
