package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;

import io.lettuce.core.RedisCommandTimeoutException;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * Turns a call of a semaphore that the server refused ({@link Refusal}) into an exception that says
 * which command, on which key or channel, the ACL of the Redis user refused (or which command the
 * server does not have), and what to grant: a person reads what to change, not a bare
 * {@code NOPERM}; and a connection the server refused a command it needs to make
 * ({@link #whileConnecting}). Any other failure passes through as it is.
 */
final class RefusedCalls {

    private RefusedCalls() {
    }

    /**
     * @param after what the call sent after the script, in words ("" if nothing)
     * @return {@code reply}, failing with an explanation when the server refused the script call
     *         (see {@link #explained(Throwable, SemaphoreKeys, String, String)}); the explanation is
     *         made only then
     */
    static <T> CompletableFuture<T> explained(CompletableFuture<T> reply, SemaphoreKeys keys, ScriptCall<?> call,
                                              String after) {
        return reply.exceptionallyCompose(error -> CompletableFuture.failedFuture(
                explained(error, keys, scriptCall(call) + after, call.script().getScriptAsString())));
    }

    /**
     * @param error  the failure of a call on {@code keys}
     * @param call   what the call was, e.g. "the acquire script"
     * @param script the script's source, to name the command on the line Redis points at; null if none
     * @return {@code error}, or, when the server refused the call, a {@link SemaphoreUnavailableException}
     *         that explains it (with the reply among its causes)
     */
    static Throwable explained(Throwable error, SemaphoreKeys keys, String call, @Nullable String script) {
        if (unanswered(error)) {
            // the call got no reply: a refusal among the causes is the connection's, which the message
            // already explains as what the client needs to connect, not as this call's
            return error;
        }
        Refusal refusal = Refusal.of(error, script);
        if (refusal == null) {
            return error;
        }
        return new SemaphoreUnavailableException(keys.name(), Reason.REFUSED, explain(refusal, keys, call),
                CallFailures.cause(error));
    }

    /** @return whether the call timed out (no reply, or no connection to send it on) */
    private static boolean unanswered(Throwable error) {
        Set<Throwable> seen = new HashSet<>();
        for (Throwable cause = error; cause != null && seen.add(cause); cause = cause.getCause()) {
            if (cause instanceof RedisCommandTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** @return why a connection could not be made when the server refused a command it needs, else "" */
    static String whileConnecting(Throwable connectFailure) {
        Refusal refusal = Refusal.of(connectFailure, null);
        return refusal == null ? "" : ": the server refused " + refusal.what() + ", which the client needs to connect"
                + " (Redis: \"" + refusal.reply().strip() + "\"); " + (refusal.kind().byAcl()
                        ? "give the Redis user the ACL rule of " + Refusal.ACL_DOCS
                        : "see docs/compatibility.md");
    }

    /** @return the explanation of a refused call of semaphore {@code keys.name()} */
    static String explain(Refusal refusal, SemaphoreKeys keys, String call) {
        String prefix = prefix(keys);
        String of = call + " of semaphore '" + keys.name() + "'";
        String in = ", in " + of;
        String grant = " Give the Redis user the ACL rule of " + Refusal.ACL_DOCS + ": ";
        String said = " (Redis: \"" + refusal.reply().strip() + "\")";
        return switch (refusal.kind()) {
            case KEY -> "The ACL of the Redis user refused " + refusal.what() + in
                    + ", which works on the keys " + String.join(", ", keys.all()) + said + "." + grant
                    + "~" + prefix + ":* grants every key of the library under key prefix '" + prefix + "'.";
            case CHANNEL -> "The ACL of the Redis user refused " + refusal.what() + in
                    + ", which hands grants to the waiting JVMs on their inbox channels (" + prefix
                    + ":inbox:<client id>, or " + prefix + ":{<name>}:inbox:<client id> on a Redis Cluster 7+)" + said
                    + "." + grant + "&" + prefix + ":* grants every channel of the library under key prefix '"
                    + prefix + "'.";
            case COMMAND -> "The ACL of the Redis user refused " + refusal.what() + in + said + "." + grant
                    + (refusal.command() == null ? "it lists every command the library sends."
                            : "+" + refusal.command() + " is one of the commands it lists.");
            case UNKNOWN_COMMAND -> isScripting(refusal.command())
                    ? "This Redis server runs no Lua scripts (it does not know " + refusal.commandName() + "), and"
                            + " every operation of the library is one: the semaphores cannot work on it" + said
                            + ". What each Redis offering runs: docs/compatibility.md."
                    : "This Redis server does not run " + refusal.what() + ", which " + of
                    + " needs" + said + ". What each Redis offering runs, and what works without it: "
                    + "docs/compatibility.md.";
        };
    }

    /** @return whether the command is how a script runs: without it, a server runs no script at all */
    private static boolean isScripting(@Nullable String command) {
        return "evalsha".equals(command) || "eval".equals(command);
    }

    /** @return the key prefix of the library's keys: what comes before {@code :{<name>}} */
    private static String prefix(SemaphoreKeys keys) {
        String key = keys.all().get(0);
        int tag = key.indexOf(":{");
        return tag < 0 ? key : key.substring(0, tag);
    }

    /** @return "the acquire script" for {@code AcquireScript}: how a person names the call */
    static String scriptCall(ScriptCall<?> call) {
        String type = call.getClass().getSimpleName();
        String name = type.endsWith("Script") ? type.substring(0, type.length() - "Script".length()) : type;
        return "the " + name.toLowerCase(Locale.ROOT) + " script";
    }
}
