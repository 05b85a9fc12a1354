package io.github.redissemaphore.security;

import java.util.ArrayList;
import java.util.List;

/**
 * The Redis ACL rule docs/operating.md gives for an application of the starter: keys and channels under
 * its {@code key-prefix}, and only the commands the library's traffic contains. The tests grant
 * exactly this and nothing else, and check that Redis refuses nothing of the real traffic;
 * {@link AclRuleTest} checks that the commands are exactly those the scripts and the client send.
 *
 * <p>Where each command comes from:
 * <ul>
 * <li>{@code EVALSHA}, {@code EVAL} (the latter when the script cache misses): every semaphore
 *     operation ({@code ScriptRunner}); the commands the scripts run are checked against the
 *     same user, hence {@code TIME HMGET HGET HSET HDEL ZADD ZREM ZRANGE ZRANGEBYSCORE ZSCORE ZCARD
 *     PEXPIREAT PERSIST PUBLISH} (the {@code redis.call}s of the Lua scripts; {@code PERSIST} when a
 *     runtime limit is set; {@code RPUSH LLEN LINDEX LTRIM} for the window of a semaphore with a
 *     {@code rate-limit});</li>
 * <li>{@code SUBSCRIBE} and, when it stops, {@code UNSUBSCRIBE} followed by {@code PING}: the inbox
 *     channel {@code <prefix>:inbox:<client id>} through Spring Data Redis's
 *     {@code RedisMessageListenerContainer} ({@code LettuceSubscription} sends the PING to close the
 *     subscription cleanly);</li>
 * <li>{@code HELLO} (or {@code AUTH}) with the credentials: Lettuce's handshake, allowed to every
 *     user by Redis, so not in the rule;</li>
 * <li>with {@code replicas} above 0, in addition: {@code SET} (the marker key
 *     {@code <prefix>:{<name>}:replicated}) and {@code WAIT};</li>
 * <li>on a Redis Cluster 7 or newer, in addition: {@code SPUBLISH} (scripts), {@code SSUBSCRIBE}
 *     and {@code SUNSUBSCRIBE} (the sharded inbox {@code <prefix>:{<name>}:inbox:<client id>}),
 *     {@code INFO} (the registry reads the nodes' version, and tries {@code SPUBLISH} where INFO is refused;
 *     Lettuce's topology refresh),
 *     {@code CLUSTER NODES}, {@code CLIENT SETNAME} (Lettuce's topology refresh) and
 *     {@code CLUSTER MYID} (Lettuce, on node connections).</li>
 * </ul>
 */
final class AclRule {

    /** The commands of standalone and Sentinel set-ups (and of a Redis 6 cluster, minus its topology needs). */
    static final List<String> COMMANDS = List.of(
            "evalsha", "eval",
            "time", "hmget", "hget", "hset", "hdel", "zadd", "zrem", "zrange", "zrangebyscore", "zrangebylex",
            "zscore", "zcard", "hgetall", "rpush", "llen", "lindex", "ltrim",
            "pexpireat", "persist", "publish",
            "subscribe", "unsubscribe", "ping");

    /** What semaphores with {@code replicas} above 0 need on top of {@link #COMMANDS}. */
    static final List<String> REPLICATION_COMMANDS = List.of("set", "wait");

    /** What a Redis Cluster 7+ needs on top of {@link #COMMANDS}. */
    static final List<String> CLUSTER_COMMANDS = List.of(
            "spublish", "ssubscribe", "sunsubscribe", "info", "cluster|nodes", "cluster|myid", "client|setname");

    private AclRule() {
    }

    /**
     * @return the rules of the user, each one argument of {@code ACL SETUSER <user>} (or of a
     *         {@code --user <user>} argument of {@code redis-server}); {@code keyPrefix} must not
     *         contain glob characters ({@code * ? [ ] \})
     */
    static List<String> rules(String password, String keyPrefix, boolean cluster) {
        List<String> commands = new ArrayList<>(COMMANDS);
        if (cluster) {
            commands.addAll(CLUSTER_COMMANDS);
        }
        return rules(password, keyPrefix, commands);
    }

    /** @return the rules of a user allowed exactly {@code commands} on the keys and channels of {@code keyPrefix} */
    static List<String> rules(String password, String keyPrefix, List<String> commands) {
        List<String> rules = new ArrayList<>(List.of("reset", "on", ">" + password,
                "~" + keyPrefix + ":*", "resetchannels", "&" + keyPrefix + ":*", "-@all"));
        commands.forEach(command -> rules.add("+" + command));
        return rules;
    }

    /** @return {@code --user <user> <rules...>}: arguments of {@code redis-server} that create the user */
    static List<String> serverArguments(String user, String password, String keyPrefix) {
        return serverArguments(user, password, keyPrefix, COMMANDS);
    }

    /** @return {@code --user <user> <rules...>} for a user allowed exactly {@code commands} */
    static List<String> serverArguments(String user, String password, String keyPrefix, List<String> commands) {
        List<String> arguments = new ArrayList<>(List.of("--user", user));
        arguments.addAll(rules(password, keyPrefix, commands));
        return arguments;
    }

    /** @return {@code ACL SETUSER <user> <rules...>} as separate arguments, for an admin connection */
    static String[] setUser(String user, String password, String keyPrefix, boolean cluster) {
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user));
        command.addAll(rules(password, keyPrefix, cluster));
        return command.toArray(String[]::new);
    }

    /** @return the rule as one line, as docs/operating.md shows it */
    static String setUserLine(String user, String password, String keyPrefix, boolean cluster) {
        return String.join(" ", setUser(user, password, keyPrefix, cluster));
    }
}
