package io.github.redissemaphore.autoconfigure.dropin;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@link MissingLibraryException}: the switch, what is missing, what to add. */
final class MissingLibraryFailureAnalyzer extends AbstractFailureAnalyzer<MissingLibraryException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, MissingLibraryException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
    }
}
