package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;

import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The WARN of an unavailable semaphore: once a minute per semaphore and cause, whatever the call's timings. */
class UnavailableWarningsTest {

    private final AtomicLong now = new AtomicLong();
    private final UnavailableWarnings warnings =
            new UnavailableWarnings(LoggerFactory.getLogger(UnavailableWarningsTest.class), now::get);

    @Test
    void oncePerSemaphoreAndCauseAMinute() {
        assertThat(warnings.heard("reports", timeout(2000))).isTrue();
        assertThat(warnings.heard("reports", timeout(2013))).as("the same cause, other figures").isFalse();
        assertThat(warnings.heard("reports", new CompletionException(timeout(2000))))
                .as("as a future's failure").isFalse();
        assertThat(warnings.heard("exports", timeout(2000))).as("another semaphore").isTrue();
        assertThat(warnings.heard("reports", refused())).as("another cause").isTrue();

        now.addAndGet(Duration.ofSeconds(59).toNanos());
        assertThat(warnings.heard("reports", timeout(2000))).isFalse();
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(warnings.heard("reports", timeout(2000))).as("a minute later").isTrue();
    }

    @Test
    void onlyUnavailability() {
        assertThat(warnings.heard("reports", null)).isFalse();
        assertThat(warnings.heard("reports", new SemaphoreRejectedException("reports", 1, Duration.ZERO))).isFalse();
        assertThat(warnings.heard("reports", new IllegalStateException("a bug"))).isFalse();
    }

    private static SemaphoreUnavailableException timeout(long millis) {
        return new SemaphoreUnavailableException("reports", "Redis did not answer within " + millis + " ms", null);
    }

    private static SemaphoreUnavailableException refused() {
        return new SemaphoreUnavailableException("reports", "The ACL of the Redis user refused the command ZADD", null);
    }
}
