package io.github.redissemaphore.test;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which admin commands reach beyond the keys of a test: they delete other people's data, stop or
 * stall the server, cut clients off or change its configuration, users or script cache. A
 * {@link RedisServer} refuses them on a server the test support did not start (REDIS_URL), so the
 * suite can run against a server that also holds someone's data.
 *
 * <p>Commands with subcommands are judged by the subcommand: {@code CONFIG GET} and
 * {@code CLIENT LIST} only read, {@code CONFIG SET} and {@code CLIENT KILL} do not. Key commands
 * ({@code SET}, {@code UNLINK}...) are not judged here: the tests keep to their own key prefix.
 */
final class ServerWideCommands {

    /** Commands that change the server as a whole whatever their arguments. */
    private static final Set<String> ALWAYS = Set.of("FLUSHALL", "FLUSHDB", "SHUTDOWN", "DEBUG", "SWAPDB",
            "REPLICAOF", "SLAVEOF", "FAILOVER", "SAVE", "BGSAVE", "BGREWRITEAOF", "MODULE", "MIGRATE");

    /** Of these commands only these subcommands leave the server as it was. */
    private static final Map<String, Set<String>> READ_ONLY_SUBCOMMANDS = Map.of(
            "CONFIG", Set.of("GET"),
            "CLIENT", Set.of("LIST", "INFO", "ID", "GETNAME", "SETNAME"),
            "ACL", Set.of("WHOAMI", "LIST", "USERS", "GETUSER", "CAT", "LOG"),
            "SCRIPT", Set.of("EXISTS", "LOAD"),
            "FUNCTION", Set.of("LIST", "STATS", "DUMP"),
            "CLUSTER", Set.of("INFO", "NODES", "SLOTS", "SHARDS", "KEYSLOT", "MYID", "COUNTKEYSINSLOT"));

    private ServerWideCommands() {
    }

    /**
     * @return the name of the operation, e.g. {@code "CONFIG SET"}, when {@code command} reaches
     *         beyond a test's keys; null when it does not
     */
    static String operation(String... command) {
        if (command.length == 0) {
            return null;
        }
        String name = command[0].toUpperCase(Locale.ROOT);
        if (ALWAYS.contains(name)) {
            return command.length > 1 && name.equals("DEBUG") ? name + " " + command[1].toUpperCase(Locale.ROOT)
                    : name;
        }
        Set<String> readOnly = READ_ONLY_SUBCOMMANDS.get(name);
        if (readOnly == null) {
            return null;
        }
        String subcommand = command.length > 1 ? command[1].toUpperCase(Locale.ROOT) : "";
        String operation = (name + " " + subcommand).trim();
        if (!readOnly.contains(subcommand)) {
            return operation;
        }
        // ACL LOG reads the log, ACL LOG RESET empties it.
        boolean reset = command.length > 2 && command[2].equalsIgnoreCase("RESET");
        return reset ? operation + " RESET" : null;
    }
}
