package io.github.redissemaphore.web;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The computed {@code Retry-After}: the predicted wait in whole seconds rounded up, at least 1,
 * capped at 60 s, plus a jitter of up to a tenth of it or a second, whichever is more.
 */
class ComputedRetryAfterTest {

    private static final ComputedRetryAfter NO_JITTER = new ComputedRetryAfter(bound -> 0);
    private static final ComputedRetryAfter MOST_JITTER = new ComputedRetryAfter(bound -> bound - 1);

    @ParameterizedTest(name = "predicted {0} ms: {1} s without jitter, {2} s with the most")
    @CsvSource({
            "0,      1,  1",
            "1,      1,  2",
            "200,    1,  2",
            "1000,   1,  2",
            "1001,   2,  3",
            "12500, 13, 14",
            "30000, 30, 33",
            "60000, 60, 66",
            "3600000, 60, 66"})
    void wholeSecondsRoundedUpAtLeastOneCappedAtAMinuteWithTheJitterOnTop(long predictedMillis, String least,
                                                                          String most) {
        Duration predicted = Duration.ofMillis(predictedMillis);
        assertThat(NO_JITTER.seconds(predicted)).isEqualTo(least);
        assertThat(MOST_JITTER.seconds(predicted)).isEqualTo(most);
    }

    @Test
    void aCrowdToldTheSamePredictionIsSpreadOverSeveralSeconds() {
        ComputedRetryAfter random = new ComputedRetryAfter();
        Set<String> advised = new HashSet<>();
        for (int caller = 0; caller < 200; caller++) {
            advised.add(random.seconds(Duration.ofSeconds(30)));
        }
        assertThat(advised).as("30 s plus up to 3 s").isSubsetOf("30", "31", "32", "33").hasSizeGreaterThan(1);
    }
}
