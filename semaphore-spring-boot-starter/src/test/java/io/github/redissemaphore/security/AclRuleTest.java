package io.github.redissemaphore.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The ACL rule of docs/operating.md ({@link AclRule}) grants exactly the commands the library sends: every
 * command the Lua scripts run, read out of the script files as they ship, and every command the
 * client sends, each traced to the code that sends it. A command added to a script or to the
 * client and not to the rule (or left in the rule after it is gone) fails here, before any user
 * meets {@code NOPERM}. {@link AclLeastPrivilegeTest} then runs the traffic under the rule.
 */
class AclRuleTest {

    /** The script files, as the core ships them on the class path. */
    private static final String SCRIPTS = "classpath*:io/github/redissemaphore/scripts/*.lua";
    /** {@code redis.call('NAME'} or {@code redis.pcall("NAME"}. */
    private static final Pattern SCRIPT_COMMAND = Pattern.compile("redis\\.p?call\\(\\s*['\"]([A-Za-z]+)['\"]");
    private static final Pattern ANY_CALL = Pattern.compile("redis\\.p?call\\(");
    /** Published only to a channel with a hash tag: a sharded inbox, on a Redis Cluster 7+. */
    private static final Set<String> SCRIPT_COMMANDS_OF_CLUSTERS = Set.of("spublish");

    private static final Path CORE_SOURCES = Path.of("..", "semaphore-core", "src", "main", "java");
    private static final Path STARTER_SOURCES = Path.of("src", "main", "java");
    private static final String RUNNER = "io/github/redissemaphore/core/internal/redis/ScriptRunner.java";
    private static final String REPLICA_WAIT = "io/github/redissemaphore/core/internal/redis/ReplicaWait.java";
    /** Makes the library's connection, which {@link #RUNNER} sends on, and sends nothing itself. */
    private static final String CONNECTION_MAKER = "io/github/redissemaphore/core/internal/redis/ConnectionMaker.java";
    /** Lends the connections that {@link #REPLICA_WAIT} and {@link #WAIT_CHECK} send on, and sends nothing itself. */
    private static final String DEDICATED_CONNECTIONS =
            "io/github/redissemaphore/core/internal/redis/DedicatedConnections.java";
    private static final String JVM_INBOX = "io/github/redissemaphore/core/internal/redis/JvmInbox.java";
    private static final String SHARDED_INBOX = "io/github/redissemaphore/core/internal/redis/ShardedInbox.java";
    /** Sends {@code WAIT 0 0} once, on a connection {@link #DEDICATED_CONNECTIONS} lends, when settings wait for replicas. */
    private static final String WAIT_CHECK = "io/github/redissemaphore/core/internal/redis/WaitCheck.java";
    private static final String INBOX_CHOICE = "io/github/redissemaphore/core/internal/redis/InboxChoice.java";
    /** What opens a connection to Redis in our code: every file with one of these must be in {@link #CLIENT}. */
    private static final List<String> CONNECTS = List.of("getConnection(", "getClusterConnection(",
            "getNativeConnection(", "connectPubSub", "RedisMessageListenerContainer", "RedisTemplate",
            ".connect(", "connectAsync(");

    /**
     * The commands the client sends besides the scripts', each with the file and the code that sends
     * it; Lettuce's own (cluster topology) with no file.
     */
    private static final List<Sent> CLIENT = List.of(
            new Sent("evalsha", Needed.ALWAYS, RUNNER, "evalsha(script.getSha1()"),
            new Sent("eval", Needed.ALWAYS, RUNNER, ">eval(script.getScriptAsString()"),
            new Sent("subscribe", Needed.ALWAYS, JVM_INBOX, "extends RedisMessageListenerContainer"),
            // the listener container closes its subscription with UNSUBSCRIBE, then PING
            new Sent("unsubscribe", Needed.ALWAYS, JVM_INBOX, "container.destroy()"),
            new Sent("ping", Needed.ALWAYS, JVM_INBOX, "container.destroy()"),
            new Sent("set", Needed.REPLICAS, REPLICA_WAIT, "redis.set(marker"),
            new Sent("wait", Needed.REPLICAS, REPLICA_WAIT, ".waitForReplication("),
            new Sent("wait", Needed.REPLICAS, WAIT_CHECK, ".waitForReplication(0, 0)"),
            new Sent("ssubscribe", Needed.CLUSTER, SHARDED_INBOX, ".ssubscribe(channel)"),
            new Sent("sunsubscribe", Needed.CLUSTER, SHARDED_INBOX, ".sunsubscribe(channel)"),
            new Sent("info", Needed.CLUSTER, INBOX_CHOICE, ".info(\"server\")"),
            // only where INFO is refused: whether sharded pub/sub works
            new Sent("spublish", Needed.CLUSTER, INBOX_CHOICE, ".spublish("),
            new Sent("cluster|nodes", Needed.CLUSTER, null, "Lettuce's topology refresh"),
            new Sent("client|setname", Needed.CLUSTER, null, "Lettuce's topology refresh"),
            new Sent("cluster|myid", Needed.CLUSTER, null, "Lettuce, on node connections"));

    @Test
    void theRuleGrantsExactlyTheCommandsOfTheScriptsAndOfTheClient() throws IOException {
        Set<String> scripts = scriptCommands();
        assertThat(scripts).as("the scripts run at least these; is the pattern still right?")
                .contains("time", "hmget", "hset", "zadd", "pexpireat", "persist", "publish", "spublish");

        Set<String> always = new TreeSet<>(scripts);
        always.removeAll(SCRIPT_COMMANDS_OF_CLUSTERS);
        always.addAll(sent(Needed.ALWAYS));
        Set<String> cluster = new TreeSet<>(SCRIPT_COMMANDS_OF_CLUSTERS);
        cluster.addAll(sent(Needed.CLUSTER));

        assertThat(new TreeSet<>(AclRule.COMMANDS)).as("the rule of every set-up").isEqualTo(always);
        assertThat(new TreeSet<>(AclRule.REPLICATION_COMMANDS)).as("what replicas > 0 adds")
                .isEqualTo(sent(Needed.REPLICAS));
        assertThat(new TreeSet<>(AclRule.CLUSTER_COMMANDS)).as("what a Redis Cluster 7+ adds").isEqualTo(cluster);
        assertThat(AclRule.COMMANDS).as("no command twice")
                .doesNotHaveDuplicates().doesNotContainAnyElementsOf(AclRule.CLUSTER_COMMANDS)
                .doesNotContainAnyElementsOf(AclRule.REPLICATION_COMMANDS);
    }

    @Test
    void everyCommandTheClientSendsIsTracedToItsCodeAndEveryFileThatConnectsIsListed() throws IOException {
        assumeThat(Files.isDirectory(CORE_SOURCES)).as("the core's sources next to this module").isTrue();
        for (Sent sent : CLIENT) {
            if (sent.file() != null) {
                assertThat(Files.readString(CORE_SOURCES.resolve(sent.file()), StandardCharsets.UTF_8))
                        .as("%s sends %s", sent.file(), sent.command()).contains(sent.code());
            }
        }
        Set<String> listed = CLIENT.stream().map(Sent::file).filter(file -> file != null)
                .collect(Collectors.toCollection(TreeSet::new));
        listed.addAll(List.of(CONNECTION_MAKER, DEDICATED_CONNECTIONS));
        listed.removeAll(List.of(RUNNER, REPLICA_WAIT, WAIT_CHECK));
        assertThat(filesThatConnect()).as("every file that talks to Redis has its commands listed here")
                .isEqualTo(listed);
    }

    /** @return the command names of every {@code redis.call} and {@code redis.pcall} of the scripts, lower case */
    static Set<String> scriptCommands() throws IOException {
        Resource[] files = new PathMatchingResourcePatternResolver().getResources(SCRIPTS);
        assertThat(files).extracting(Resource::getFilename).contains("_args.lua", "acquire.lua", "override.lua");
        Set<String> commands = new TreeSet<>();
        for (Resource file : files) {
            String text = file.getContentAsString(StandardCharsets.UTF_8);
            Matcher named = SCRIPT_COMMAND.matcher(text);
            int calls = 0;
            while (named.find()) {
                commands.add(named.group(1).toLowerCase(Locale.ROOT));
                calls++;
            }
            Matcher any = ANY_CALL.matcher(text);
            int all = 0;
            while (any.find()) {
                all++;
            }
            assertThat(calls).as("every call in %s names its command literally", file.getFilename()).isEqualTo(all);
        }
        return commands;
    }

    private static Set<String> sent(Needed needed) {
        return CLIENT.stream().filter(sent -> sent.needed() == needed).map(Sent::command)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** @return the core's and the starter's main sources that open or use a Redis connection, as paths under the source root */
    private static Set<String> filesThatConnect() {
        Set<String> files = new TreeSet<>();
        for (Path root : List.of(CORE_SOURCES, STARTER_SOURCES)) {
            try (Stream<Path> walk = Files.walk(root)) {
                for (Path file : walk.filter(path -> path.toString().endsWith(".java")).toList()) {
                    String text = Files.readString(file, StandardCharsets.UTF_8);
                    if (CONNECTS.stream().anyMatch(text::contains)) {
                        files.add(root.relativize(file).toString().replace('\\', '/'));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return files;
    }

    /** Which part of the rule a command belongs to. */
    private enum Needed {
        /** {@link AclRule#COMMANDS} */
        ALWAYS,
        /** {@link AclRule#REPLICATION_COMMANDS} */
        REPLICAS,
        /** {@link AclRule#CLUSTER_COMMANDS} */
        CLUSTER
    }

    /**
     * @param file under the core's source root; null for Lettuce's own commands
     * @param code what in that file sends the command
     */
    private record Sent(String command, Needed needed, String file, String code) {
    }
}
