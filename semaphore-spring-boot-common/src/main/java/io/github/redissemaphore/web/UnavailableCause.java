package io.github.redissemaphore.web;

import io.github.redissemaphore.core.SemaphoreUnavailableException;

/**
 * The short cause of a {@link SemaphoreUnavailableException} that a 503 may show a client: a few
 * words of what went wrong, never the full message, which names servers, users and ACL rules and
 * is for the log (the library logs it at WARN). One per {@link SemaphoreUnavailableException.Reason}, which
 * the core sets where it fails the call; the words are this module's.
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

    /**
     * @return whether the cause is Redis out of reach (no connection, or no answer in time): what a
     *         semaphore's {@code when-unavailable} decides about, unlike a refused command or a shutdown
     */
    boolean redisUnreachable() {
        return this == NO_ANSWER || this == UNREACHABLE;
    }

    /** @return the words a client may show */
    String text() {
        return text;
    }

    /** @return the words for the reason the core gave the exception where it failed the call */
    static UnavailableCause of(SemaphoreUnavailableException failure) {
        return switch (failure.getReason()) {
            case SHUTTING_DOWN -> SHUTTING_DOWN;
            case REFUSED -> REFUSED;
            case NOT_REPLICATED -> NOT_REPLICATED;
            case NO_ANSWER -> NO_ANSWER;
            case UNREACHABLE -> UNREACHABLE;
            case UNAVAILABLE -> UNAVAILABLE;
        };
    }
}
