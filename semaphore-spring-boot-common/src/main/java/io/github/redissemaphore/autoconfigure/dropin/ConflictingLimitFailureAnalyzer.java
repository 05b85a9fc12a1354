package io.github.redissemaphore.autoconfigure.dropin;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@link ConflictingLimitException}: both places, and the two ways to agree. */
final class ConflictingLimitFailureAnalyzer extends AbstractFailureAnalyzer<ConflictingLimitException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ConflictingLimitException cause) {
        String ourProperty = cause.ours().replaceFirst(" = .*$", "");
        return new FailureAnalysis(cause.getMessage(),
                "Remove " + ourProperty + " (the value of " + cause.theirs().replaceFirst(" = .*$", "")
                        + " then applies fleet-wide), or give both the same value.", cause);
    }
}
