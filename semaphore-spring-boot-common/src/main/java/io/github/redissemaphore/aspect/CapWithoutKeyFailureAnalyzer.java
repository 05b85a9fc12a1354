package io.github.redissemaphore.aspect;

import io.github.redissemaphore.aspect.CapWithoutKeyException.Unkeyed;

import java.util.stream.Collectors;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports the {@code @DistributedSemaphore} methods {@link CapWithoutKeyCheck} refused: each
 * method, its semaphore and the property that caps it, why a capped semaphore needs a key, and
 * the two ways out (a key, or no cap).
 */
final class CapWithoutKeyFailureAnalyzer extends AbstractFailureAnalyzer<CapWithoutKeyException> {

    private static final String NL = System.lineSeparator();

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, CapWithoutKeyException cause) {
        StringBuilder description = new StringBuilder(cause.headline()).append(": a shared cap (total-permits)")
                .append(" covers the keys of a keyed semaphore, \"<name>:<key>\": a semaphore with one is used")
                .append(" per key only.").append(NL);
        for (Unkeyed method : cause.methods()) {
            description.append(NL).append("    Method: ").append(method.describe()).append(NL)
                    .append("    Semaphore: ").append(method.semaphore()).append(NL)
                    .append("    Property: ").append(method.property()).append(NL);
        }
        String action = cause.methods().stream().map(method -> method.describe() + ": add key = \"...\" to its"
                        + " @DistributedSemaphore (a SpEL expression over the arguments, such as key = \"#tenant\"),"
                        + " or remove " + method.property() + ".")
                .distinct().collect(Collectors.joining(NL));
        return new FailureAnalysis(description.toString(), action, cause);
    }
}
