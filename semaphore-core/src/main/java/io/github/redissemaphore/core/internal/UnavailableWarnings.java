package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.SemaphoreUnavailableException;

import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * Says at WARN why callers of a semaphore hear {@link SemaphoreUnavailableException}: the message
 * they get (which names the server, the command refused and what to do about it) is the first thing
 * an operator needs when a guarded call answers 503, and it must not take a DEBUG logger to see it.
 *
 * <p>Once per semaphore (its base name: the keys of a keyed semaphore share their configuration and
 * their Redis) and cause a minute, not per call: an outage fails every call, and a WARN per call
 * would bury the one line that says why. A cause is the message with its figures taken out
 * ("within 2 s", a port), so the same failure seen with other timings counts once.
 *
 * <p>One instance per JVM ({@link #JVM}), like the log it writes to.
 */
final class UnavailableWarnings {

    /** Shared by every semaphore of the JVM. */
    static final UnavailableWarnings JVM = new UnavailableWarnings(EngineLogs.SEMAPHORE, System::nanoTime);

    /** How long the same cause of the same semaphore stays quiet after its WARN. */
    static final Duration QUIET = Duration.ofMinutes(1);
    /** Above this many causes remembered, those quiet no longer are forgotten. */
    private static final int MAX_REMEMBERED = 1000;

    private final Logger log;
    private final LongSupplier nanoClock;
    /** When each semaphore and cause was last warned about, by "name NUL cause". */
    private final Map<String, Long> warnedAt = new ConcurrentHashMap<>();

    UnavailableWarnings(Logger log, LongSupplier nanoClock) {
        this.log = log;
        this.nanoClock = nanoClock;
    }

    /**
     * A call of semaphore {@code baseName} ended with {@code failure}, on its way to the caller:
     * warns when it is a {@link SemaphoreUnavailableException} not warned about in the last minute.
     *
     * @return whether it warned
     */
    boolean heard(String baseName, @Nullable Throwable failure) {
        if (!(unwrap(failure) instanceof SemaphoreUnavailableException unavailable)) {
            return false;
        }
        String message = String.valueOf(unavailable.getMessage());
        long now = nanoClock.getAsLong();
        boolean[] due = {false};
        warnedAt.compute(baseName + '\u0000' + message.replaceAll("\\d+", "#"), (cause, last) -> {
            due[0] = last == null || now - last >= QUIET.toNanos();
            return due[0] ? Long.valueOf(now) : last;
        });
        if (warnedAt.size() > MAX_REMEMBERED) {
            warnedAt.values().removeIf(last -> now - last >= QUIET.toNanos());
        }
        if (due[0]) {
            log.warn("Semaphore '{}' is unavailable to its callers: {}{} (said once a minute per cause; every call at"
                            + " DEBUG of io.github.redissemaphore.web)",
                    unavailable.getSemaphoreName().orElse(baseName), message, causes(unavailable));
        }
        return due[0];
    }

    private static @Nullable Throwable unwrap(@Nullable Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** @return "; caused by: ..." for each cause whose message the failure's own does not already say */
    private static String causes(Throwable failure) {
        StringBuilder text = new StringBuilder();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        String said = String.valueOf(failure.getMessage());
        for (Throwable cause = failure.getCause(); cause != null && seen.add(cause); cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && !said.contains(message)) {
                text.append("; caused by ").append(cause.getClass().getSimpleName()).append(": ").append(message);
                said = said + message;
            }
        }
        return text.toString();
    }
}
