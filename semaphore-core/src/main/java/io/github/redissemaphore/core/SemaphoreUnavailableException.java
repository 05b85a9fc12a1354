package io.github.redissemaphore.core;

import java.net.ConnectException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

/**
 * Redis could not be reached, answered with an error, or the registry is shut down. The cause
 * says which; {@link #getReason()} says it in one stable word a program can act on (the message is
 * for a person, and may change).
 */
public class SemaphoreUnavailableException extends SemaphoreException {

    private static final long serialVersionUID = 1L;

    /**
     * Why a semaphore is unavailable, as the library knew it where it failed the call: a short
     * cause that stays the same from one version to the next, unlike the message, which names
     * servers, users and ACL rules and is for the log.
     */
    public enum Reason {
        /** The registry is closed or shutting down: no call is made any more. */
        SHUTTING_DOWN,
        /**
         * Redis refused a command the semaphore needs: the ACL of the Redis user, or a command the
         * server does not have.
         */
        REFUSED,
        /**
         * The permit was granted, but fewer replicas than the settings require acknowledged it in
         * time; it was given back.
         */
        NOT_REPLICATED,
        /** Redis did not answer in time (no reply within the Redis timeout). */
        NO_ANSWER,
        /** Redis cannot be reached: no connection could be made. */
        UNREACHABLE,
        /** Any other failure of Redis, or one built without a reason and with no cause that tells more. */
        UNAVAILABLE;

        /**
         * The reason a failure with this cause has, read off the types in its chain of causes:
         * the reason of a {@link SemaphoreUnavailableException} among them, else {@link #NO_ANSWER} for a
         * timeout, {@link #UNREACHABLE} for a failed connection, else {@link #UNAVAILABLE}.
         *
         * @param cause the failure, or null
         * @return the reason; {@link #UNAVAILABLE} for null
         */
        public static Reason of(@Nullable Throwable cause) {
            Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            for (Throwable c = cause; c != null && seen.add(c); c = c.getCause()) {
                if (c instanceof SemaphoreUnavailableException unavailable) {
                    return unavailable.reason;
                }
                // by name too: Lettuce's, Spring's and Netty's own (RedisCommandTimeoutException,
                // QueryTimeoutException, RedisConnectionFailureException, ConnectTimeoutException, ...)
                String type = c.getClass().getSimpleName();
                if (c instanceof TimeoutException || type.contains("Timeout")) {
                    return NO_ANSWER;
                }
                if (c instanceof ConnectException || type.contains("Connection")) {
                    return UNREACHABLE;
                }
            }
            return UNAVAILABLE;
        }
    }

    private final @Nullable String semaphoreName;
    private final Reason reason;

    /** An exception without a reason of its own: see {@link #SemaphoreUnavailableException(String, String, Throwable)}. */
    public SemaphoreUnavailableException(String message, @Nullable Throwable cause) {
        this(null, message, cause);
    }

    /** An exception without a reason of its own: see {@link #SemaphoreUnavailableException(String, String, Throwable)}. */
    public SemaphoreUnavailableException(String message) {
        this(null, message, null);
    }

    /**
     * An exception whose reason is read off its causes ({@link Reason#of(Throwable)}): a timeout,
     * a failed connection, or the reason of a {@code SemaphoreUnavailableException} among them. The
     * library gives every exception it builds its reason
     * ({@link #SemaphoreUnavailableException(String, Reason, String, Throwable)}).
     *
     * @param semaphoreName the semaphore the failed call was for, or null when the failure is not one
     *                      semaphore's (the registry is closed)
     */
    public SemaphoreUnavailableException(@Nullable String semaphoreName, String message, @Nullable Throwable cause) {
        this(semaphoreName, Reason.of(cause), message, cause);
    }

    /**
     * @param semaphoreName the semaphore the failed call was for, or null when the failure is not one
     *                      semaphore's (the registry is closed)
     * @param reason        why it is unavailable, as the code that fails the call knows it
     */
    public SemaphoreUnavailableException(@Nullable String semaphoreName, Reason reason, String message,
                                         @Nullable Throwable cause) {
        super(message, cause);
        this.semaphoreName = semaphoreName;
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * @return the semaphore the failed call was for (for a keyed semaphore, with its key:
     *         {@code exports:acme}); empty when the failure is not one semaphore's
     */
    public Optional<String> getSemaphoreName() {
        return Optional.ofNullable(semaphoreName);
    }

    /** @return why the semaphore is unavailable, in one stable word (a 503 problem detail shows it in a few words) */
    public Reason getReason() {
        return reason;
    }
}
