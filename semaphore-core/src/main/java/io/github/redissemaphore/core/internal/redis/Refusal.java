package io.github.redissemaphore.core.internal.redis;

import io.lettuce.core.RedisCommandExecutionException;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A command the server refused to run for this client, read from its error reply: the ACL of the
 * Redis user forbids the command, a key or a channel ({@code NOPERM}, or a script's "can't run" /
 * "ACL failure in script"), or the server has no such command ({@code unknown command}: a managed
 * offering that leaves it out, or a command renamed away). Redis words these differently from
 * version to version (6.2, 7.0, 7.2+, Valkey alike): only their stable parts are read, and
 * whatever a reply does not say is left null.
 *
 * @param kind    what was refused
 * @param command the command, lower case ({@code wait}, {@code client|setname}), when the reply or
 *                the script's line names it
 * @param object  the key or channel, when the reply names it (Redis 7.2+ in scripts)
 * @param reply   the server's reply, as it came
 */
public record Refusal(Kind kind, @Nullable String command, @Nullable String object, String reply) {

    /** Where a user reads the rule that grants the library what it needs. */
    public static final String ACL_DOCS = "docs/operating.md, 'Least privilege: ACL and TLS'";

    /** What a server refused. */
    public enum Kind {
        /** The ACL forbids the command. */
        COMMAND,
        /** The ACL forbids a key the command names. */
        KEY,
        /** The ACL forbids a channel the command names. */
        CHANNEL,
        /** The server has no such command, or not for this client. */
        UNKNOWN_COMMAND;

        /** @return whether the ACL of the Redis user refused it, which a rule can fix */
        public boolean byAcl() {
            return this != UNKNOWN_COMMAND;
        }
    }

    private static final Pattern QUOTED = Pattern.compile("['`]([^'`]+)['`]");
    private static final Pattern RUN_THE = Pattern.compile("permissions to run the '([^']+)' command");
    private static final Pattern ACCESS_THE = Pattern.compile("access the '([^']+)' (key|channel)");
    private static final Pattern SCRIPT_LINE = Pattern.compile("@user_script:\\s?(\\d+)");
    private static final Pattern SCRIPT_CALL = Pattern.compile("redis\\.p?call\\(\\s*['\"]([A-Za-z]+)['\"]");

    /**
     * @param error  a failure of a call, wrapped or not
     * @param script the source of the script the call ran, to name the command on the line a
     *               script's refusal points at; null for a plain command
     * @return the refusal the error reports, or null when it reports none
     */
    public static @Nullable Refusal of(Throwable error, @Nullable String script) {
        RedisCommandExecutionException reply = find(error, new HashSet<>());
        return reply == null || reply.getMessage() == null ? null : parse(reply.getMessage(), script);
    }

    /** @return the refusal in an error reply, or null when it is none */
    static @Nullable Refusal parse(String reply, @Nullable String script) {
        String text = reply.toLowerCase(Locale.ROOT);
        if (text.contains("unknown redis command called from script")) {
            return new Refusal(Kind.UNKNOWN_COMMAND, scriptCommand(reply, script), null, reply);
        }
        if (text.startsWith("err unknown command") || text.startsWith("err unknown subcommand")
                || text.contains("unknown or disabled command")) {
            Matcher quoted = QUOTED.matcher(reply);
            return new Refusal(Kind.UNKNOWN_COMMAND, quoted.find() ? quoted.group(1).toLowerCase(Locale.ROOT) : null,
                    null, reply);
        }
        boolean acl = text.startsWith("noperm") || text.contains("acl failure in script")
                || text.contains("user executing the script can't");
        if (!acl) {
            return null;
        }
        Matcher run = RUN_THE.matcher(reply);
        if (run.find()) {
            return new Refusal(Kind.COMMAND, run.group(1).toLowerCase(Locale.ROOT), null, reply);
        }
        Matcher named = ACCESS_THE.matcher(reply);
        String object = named.find() ? named.group(1) : null;
        Kind kind = text.contains("channel") ? Kind.CHANNEL : text.contains(" key") ? Kind.KEY : Kind.COMMAND;
        return new Refusal(kind, scriptCommand(reply, script), object, reply);
    }

    /** The command on the line of the script the reply points at ({@code @user_script:12}), if one is there. */
    private static @Nullable String scriptCommand(String reply, @Nullable String script) {
        Matcher line = SCRIPT_LINE.matcher(reply);
        if (script == null || !line.find()) {
            return null;
        }
        String[] lines = script.split("\n", -1);
        int index = Integer.parseInt(line.group(1)) - 1;
        if (index < 0 || index >= lines.length) {
            return null;
        }
        Matcher call = SCRIPT_CALL.matcher(lines[index]);
        return call.find() ? call.group(1).toLowerCase(Locale.ROOT) : null;
    }

    /** The error reply in the causes (and suppressed failures: a cluster's topology refresh) of {@code error}. */
    private static @Nullable RedisCommandExecutionException find(@Nullable Throwable error, Set<Throwable> seen) {
        if (error == null || !seen.add(error)) {
            return null;
        }
        if (error instanceof RedisCommandExecutionException reply) {
            return reply;
        }
        RedisCommandExecutionException inCause = find(error.getCause(), seen);
        if (inCause != null) {
            return inCause;
        }
        for (Throwable suppressed : error.getSuppressed()) {
            RedisCommandExecutionException found = find(suppressed, seen);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** @return the command as Redis' documentation writes it: {@code WAIT}, {@code CLUSTER NODES} */
    public @Nullable String commandName() {
        return command == null ? null : command.toUpperCase(Locale.ROOT).replace('|', ' ');
    }

    private String byCommand() {
        return command == null ? "" : " (" + commandName() + ")";
    }

    /** @return what was refused, in words: "the command WAIT", "a key", "the channel x" */
    public String what() {
        return switch (kind) {
            case COMMAND, UNKNOWN_COMMAND -> command == null ? "a command" : "the command " + commandName();
            case KEY -> (object == null ? "a key" : "the key " + object) + byCommand();
            case CHANNEL -> (object == null ? "a channel" : "the channel " + object) + byCommand();
        };
    }
}
