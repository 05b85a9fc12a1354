package io.github.redissemaphore.web;

import io.github.redissemaphore.core.SemaphoreUnavailableException;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

/**
 * The short cause of a {@link SemaphoreUnavailableException} that a 503 may show a client: a few
 * words of what went wrong, never the full message, which names servers, users and ACL rules and
 * is for the log (the library logs it at WARN). Read off the exception's message and causes.
 */
enum UnavailableCause {

    SHUTTING_DOWN("the service is shutting down"),
    REFUSED("Redis refused a command the semaphore needs"),
    NOT_REPLICATED("Redis replicas did not acknowledge the permit in time"),
    NO_ANSWER("Redis did not answer in time"),
    UNREACHABLE("Redis cannot be reached"),
    UNAVAILABLE("Redis is unavailable");

    private final String text;

    UnavailableCause(String text) {
        this.text = text;
    }

    /** @return the words a client may show */
    String text() {
        return text;
    }

    static UnavailableCause of(SemaphoreUnavailableException failure) {
        String message = lower(failure.getMessage());
        if (message.contains("registry is closed") || message.contains("shutting down")) {
            return SHUTTING_DOWN;
        }
        // the library's own words for a refusal (RefusedCalls), not a "connection refused"
        if (message.contains("user refused") || message.contains("server refused")
                || message.contains("redis server does not run") || message.contains("runs no lua")) {
            return REFUSED;
        }
        if (message.contains("replicas")) {
            return NOT_REPLICATED;
        }
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable cause = failure; cause != null && seen.add(cause); cause = cause.getCause()) {
            String type = cause.getClass().getSimpleName();
            if (cause instanceof TimeoutException || type.contains("Timeout")) {
                return NO_ANSWER;
            }
            if (type.contains("Connection") || cause instanceof java.net.ConnectException) {
                return UNREACHABLE;
            }
        }
        return message.contains("did not answer") || message.contains("has not answered") ? NO_ANSWER : UNAVAILABLE;
    }

    private static String lower(@Nullable String text) {
        return text == null ? "" : text.toLowerCase(Locale.ROOT);
    }
}
