package io.github.redissemaphore.sample.demo;

import org.jspecify.annotations.Nullable;

/**
 * The result of one HTTP call of the demo.
 *
 * @param outcome      how it ended
 * @param waitedMillis how long a served call waited for its permit (a report's as the server measured it, an
 *                     export's from sending to its start); 0 otherwise
 * @param detail       for a failed call, what went wrong
 */
public record Call(Outcome outcome, long waitedMillis, @Nullable String detail) {

    static Call served(long waitedMillis) {
        return new Call(Outcome.SERVED, waitedMillis, "");
    }

    static Call rejected() {
        return new Call(Outcome.REJECTED, 0, "");
    }

    static Call failed(@Nullable String detail) {
        return new Call(Outcome.FAILED, 0, detail);
    }
}
