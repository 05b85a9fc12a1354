package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis server for a test: where it is, connection factories on it, the key prefix of its tests,
 * inspection and fault injection.
 *
 * <p>A server is <em>owned</em> when this support started it: a process of its own or a Docker
 * container. A server from {@code REDIS_URL} is not: it may hold someone's data, so every command
 * that reaches beyond the keys of the tests ({@code FLUSHALL}, {@code CLIENT PAUSE}, {@code DEBUG},
 * {@code CLIENT KILL}, {@code CONFIG SET}, {@code ACL SETUSER}, {@code SCRIPT FLUSH}...) is refused
 * there with an {@link IllegalStateException} naming it; a test that needs one asks for a
 * {@link Dedicated @Dedicated} server or skips itself with {@link #assumeOwned(String)}.
 *
 * <p>A server is <em>managed</em> when this support runs its process (a {@code redis-server} from
 * the PATH or the embedded-redis jar): only then can it be {@link #stop() stopped}, {@link #start()
 * restarted} on the same port and {@link #kill() killed}. Get a managed one with
 * {@link Dedicated @Dedicated} or {@link RedisServers#start()}.
 *
 * <p>Every handle has a {@link #keyPrefix() key prefix} of its own, {@code semaphore-test-} and
 * random hex digits: tests write only keys under it (registries get it as their {@code keyPrefix}),
 * and {@link #deleteOwnKeys()} deletes exactly those, with {@code SCAN} and {@code UNLINK}.
 *
 * <p>Admin calls ({@link #flushAll()}, {@link #commandCalls()}, {@link #pause(Duration)}...) go over
 * a short-lived plain socket of their own, never over a factory's connections; they show up in the
 * command statistics only as themselves ({@code flushall}, {@code info}, {@code client|pause}...),
 * so count the commands you care about, or differences between two readings.
 *
 * <p>Closing destroys every connection factory handed out and stops the server if managed (removes
 * the container if from Docker; on a REDIS_URL server deletes the keys under its prefix, nothing else).
 */
public final class RedisServer implements AutoCloseable {

    /** Long enough for a command queued behind a {@link #pause} or {@link #debugSleep} of a test. */
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern COMMAND_STAT = Pattern.compile("^cmdstat_([^:]+):calls=(\\d+)", Pattern.MULTILINE);
    private static final Pattern TOTAL_COMMANDS = Pattern.compile("^total_commands_processed:(\\d+)", Pattern.MULTILINE);
    /** What every key prefix of the test support starts with. */
    static final String KEY_PREFIX_STEM = "semaphore-test-";
    private static final String SCAN_COUNT = "1000";

    private final String host;
    private final int port;
    private final RedisProcess process;
    private final AutoCloseable owner;
    private final String description;
    private final boolean owned;
    private final String keyPrefix;
    private final ConnectionFactories factories = new ConnectionFactories();
    private final boolean closeable;
    private boolean closed;

    private RedisServer(String host, int port, RedisProcess process, AutoCloseable owner, boolean owned,
            String description, String keyPrefix, boolean closeable) {
        this.host = host;
        this.port = port;
        this.process = process;
        this.owner = owner;
        this.owned = owned;
        this.description = description;
        this.keyPrefix = keyPrefix;
        this.closeable = closeable;
    }

    /** A server whose process we run. */
    static RedisServer managed(RedisProcess process) {
        return new RedisServer(RedisProcess.HOST, process.port(), process, process, true,
                process.binary().toString(), newKeyPrefix(), true);
    }

    /** A server we started but do not run, e.g. a container; {@code owner} is closed with it (removes it). */
    static RedisServer started(String host, int port, String description, AutoCloseable owner) {
        return new RedisServer(host, port, null, Objects.requireNonNull(owner, "owner"), true, description,
                newKeyPrefix(), true);
    }

    /** A server somebody else runs (REDIS_URL): we touch only the keys under our prefix. */
    static RedisServer foreign(String host, int port, String description) {
        return new RedisServer(host, port, null, null, false, description, newKeyPrefix(), true);
    }

    /** The same server, but {@link #close()} does nothing: for the JVM-wide shared one. */
    RedisServer unclosable() {
        return new RedisServer(host, port, process, owner, owned, description, keyPrefix, false);
    }

    /** @return {@code semaphore-test-} and 8 random hex digits; no glob character, so it is its own SCAN pattern */
    static String newKeyPrefix() {
        return KEY_PREFIX_STEM + String.format("%08x", ThreadLocalRandom.current().nextInt());
    }

    /** @return the host to connect to */
    public String host() {
        return host;
    }

    /** @return the port to connect to; a managed server keeps it across restarts */
    public int port() {
        return port;
    }

    /** @return {@code redis://host:port} */
    public String uri() {
        return "redis://" + host + ":" + port;
    }

    /**
     * @return the TLS port of a server started by {@link RedisServers#startTls}, kept across
     *         restarts; its plain {@link #port()} stays open on 127.0.0.1 for the admin calls of
     *         the test support
     * @throws IllegalStateException when this server was started without TLS
     */
    public int tlsPort() {
        String tlsPort = process == null ? null : process.argument("--tls-port");
        if (tlsPort == null) {
            throw new IllegalStateException(this + " has no TLS port: start it with RedisServers.startTls");
        }
        return Integer.parseInt(tlsPort);
    }

    /** @return whether this support runs the process, so that stop, start and kill are possible */
    public boolean managed() {
        return process != null;
    }

    /**
     * @return whether this support started the server (a process or a container), so that tests
     *         may fault it: flush, pause, stall, kill clients, change its configuration; false for
     *         a REDIS_URL server
     */
    public boolean owned() {
        return owned;
    }

    /**
     * @return the key prefix of the tests on this handle, {@code semaphore-test-} and random hex
     *         digits, different for every handle: give it to registries ({@code keyPrefix}) and
     *         applications ({@code distributed-semaphore.key-prefix}), and write raw keys only
     *         under {@code <prefix>:}
     */
    public String keyPrefix() {
        return keyPrefix;
    }

    /**
     * Skips the calling test (a JUnit assumption) on a server the support did not start, where
     * {@code operation} would be refused; for a test on the class's shared server that faults it.
     * A test that should always run asks for a {@link Dedicated @Dedicated} server instead.
     */
    public void assumeOwned(String operation) {
        Assumptions.assumeTrue(owned, () -> operation + " is not run on " + this
                + ": the test support did not start it, so its tests touch nothing but their own keys");
    }

    /**
     * @return a new, started connection factory on this server (standalone, command timeout 2 s,
     *         connect timeout 1 s); two calls model two separate JVMs. Destroyed when this server
     *         closes, or at the end of the test that created it when the server is shared by a
     *         {@link RedisExtension} test class.
     */
    public LettuceConnectionFactory connectionFactory() {
        return connectionFactory(ConnectionFactories.DEFAULT_COMMAND_TIMEOUT);
    }

    /** @return like {@link #connectionFactory()}, with the given command timeout */
    public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
        Objects.requireNonNull(commandTimeout, "commandTimeout");
        return factories.standalone(host, port, commandTimeout, null, null);
    }

    /**
     * @return like {@link #connectionFactory()}, logging in as ACL user {@code username} (made by
     *         the test, e.g. with {@code adminCommand("ACL", "SETUSER", ...)} on an owned server)
     */
    public LettuceConnectionFactory connectionFactory(String username, String password) {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        return factories.standalone(host, port, ConnectionFactories.DEFAULT_COMMAND_TIMEOUT, username, password);
    }

    /**
     * Stops the server ({@code SHUTDOWN NOSAVE}, a kill if that hangs) and returns once its port is
     * closed; its data is gone. Managed servers only.
     */
    public void stop() {
        requireManaged("stop").stop();
    }

    /** Starts a stopped or killed server again on the same port, returning once it answers PING. */
    public void start() {
        requireManaged("start").start();
    }

    /** Kills the server process with SIGKILL, like a crash. Managed servers only. */
    public void kill() {
        requireManaged("kill").kill();
    }

    /** @return whether the server answers (a managed one: whether its process is running) */
    public boolean isRunning() {
        if (process != null) {
            return process.isRunning();
        }
        return FreePorts.isListening(host, port);
    }

    private RedisProcess requireManaged(String action) {
        if (process == null) {
            throw new IllegalStateException("refusing to " + action + " " + this + ": the test support does not run "
                    + "its process (REDIS_URL or Docker); ask for a @Dedicated RedisServer or RedisServers.start()");
        }
        return process;
    }

    private void requireOwned(String operation) {
        if (!owned) {
            throw new IllegalStateException("refusing " + operation + " on " + this + ": the test support did not "
                    + "start this server, which may hold other data; ask for a @Dedicated RedisServer, or skip the "
                    + "test there with server.assumeOwned(\"" + operation + "\")");
        }
    }

    /**
     * Suspends every client, ours included, for {@code duration} ({@code CLIENT PAUSE ms ALL}):
     * commands sent meanwhile are answered once it is over. Returns at once. Owned servers only.
     */
    public void pause(Duration duration) {
        admin("CLIENT", "PAUSE", String.valueOf(duration.toMillis()), "ALL");
    }

    /**
     * Blocks the whole server for {@code duration} ({@code DEBUG SLEEP}), like a stall. Returns once
     * the server is asleep (a probe PING goes unanswered), not when it wakes up. Owned servers only.
     *
     * @return completes when the server is awake again
     */
    public CompletableFuture<Void> debugSleep(Duration duration) {
        requireOwned("DEBUG SLEEP");
        RespConnection sleeper;
        try {
            sleeper = RespConnection.open(host, port, ADMIN_TIMEOUT.plus(duration));
            sleeper.send("DEBUG", "SLEEP", String.valueOf(duration.toMillis() / 1000.0));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send DEBUG SLEEP to " + this, e);
        }
        CompletableFuture<Void> awake = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try (sleeper) {
                sleeper.read();
                awake.complete(null);
            } catch (IOException | RuntimeException e) {
                awake.completeExceptionally(e);
            }
        }, "redis-debug-sleep-" + port);
        waiter.setDaemon(true);
        waiter.start();
        // The command is on its way, but another connection's command could still be served first:
        // return only once the server is seen not answering.
        while (!awake.isDone()) {
            try (RespConnection probe = RespConnection.open(host, port, Duration.ofMillis(100))) {
                probe.call("PING");
            } catch (SocketTimeoutException e) {
                return awake;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot probe " + this + " during DEBUG SLEEP", e);
            }
        }
        // An error reply (DEBUG disabled, e.g. in a container configured so) surfaces here.
        awake.join();
        return awake;
    }

    /**
     * Closes every pub/sub client connection ({@code CLIENT KILL TYPE pubsub}), not only the tests'.
     * Owned servers only. @return how many
     */
    public long killPubSubClients() {
        return (Long) admin("CLIENT", "KILL", "TYPE", "pubsub");
    }

    /** Deletes every key of every database. Owned servers only. */
    public void flushAll() {
        admin("FLUSHALL");
    }

    /**
     * Deletes the keys under {@link #keyPrefix()} ({@code SCAN MATCH <prefix>:*}, {@code UNLINK}),
     * and nothing else: safe on any server.
     *
     * @return how many were deleted
     */
    public long deleteOwnKeys() {
        String pattern = keyPrefix + ":*";
        return scan(pattern, key -> true, true).size();
    }

    /** @return the keys not under {@link #keyPrefix()}, sorted: on an owned server, what a test should not have written */
    List<String> keysOutsidePrefix() {
        String own = keyPrefix + ":";
        return scan("*", key -> !key.startsWith(own), false);
    }

    /**
     * @return calls per command since start (or CONFIG RESETSTAT), from {@code INFO commandstats}:
     *         e.g. "evalsha" -> 3; Redis 7 names subcommands like "client|setinfo"
     */
    public Map<String, Long> commandCalls() {
        Map<String, Long> calls = new LinkedHashMap<>();
        Matcher matcher = COMMAND_STAT.matcher(info("commandstats"));
        while (matcher.find()) {
            calls.put(matcher.group(1), Long.parseLong(matcher.group(2)));
        }
        return calls;
    }

    /** @return {@code total_commands_processed} of {@code INFO stats} */
    public long totalCommandsProcessed() {
        Matcher matcher = TOTAL_COMMANDS.matcher(info("stats"));
        if (!matcher.find()) {
            throw new IllegalStateException("INFO stats of " + this + " has no total_commands_processed");
        }
        return Long.parseLong(matcher.group(1));
    }

    /** @return the raw text of {@code INFO section} */
    public String info(String section) {
        return (String) admin("INFO", section);
    }

    /**
     * @return the keys matching {@code pattern}, sorted; by {@code SCAN}, not {@code KEYS}, which
     *         would block a large REDIS_URL server
     */
    public List<String> keys(String pattern) {
        return scan(pattern, key -> true, false);
    }

    /**
     * Walks the keyspace with {@code SCAN} on one connection, unlinking each page's {@code chosen}
     * keys if {@code unlink}. A key deleted meanwhile may be missed and one may come twice: SCAN's
     * own terms, fine for keys that only tests write.
     *
     * @return the chosen keys, sorted, without duplicates
     */
    private List<String> scan(String pattern, Predicate<String> chosen, boolean unlink) {
        TreeSet<String> found = new TreeSet<>();
        try (RespConnection connection = RespConnection.open(host, port, ADMIN_TIMEOUT)) {
            String cursor = "0";
            do {
                List<?> reply = (List<?>) connection.call("SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT);
                cursor = (String) reply.get(0);
                List<String> page = new ArrayList<>();
                for (Object key : (List<?>) reply.get(1)) {
                    if (chosen.test((String) key)) {
                        page.add((String) key);
                    }
                }
                if (unlink && !page.isEmpty()) {
                    List<String> command = new ArrayList<>(List.of("UNLINK"));
                    command.addAll(page);
                    connection.call(command.toArray(String[]::new));
                }
                found.addAll(page);
            } while (!"0".equals(cursor));
        } catch (IOException e) {
            throw new UncheckedIOException("Redis " + this + " did not answer SCAN " + pattern, e);
        }
        return List.copyOf(found);
    }

    /** @return {@code PTTL key}: milliseconds to live, -1 without expiry, -2 when there is no such key */
    public long pttl(String key) {
        return (Long) admin("PTTL", key);
    }

    /**
     * Runs one command on a short-lived plain connection of its own, as Redis's {@code default}
     * user, which the test support leaves unrestricted even on a server with ACL users of a test
     * ({@code ACL LOG}, {@code CLIENT LIST}, {@code ACL SETUSER}...). Replies as described at
     * {@link RespConnection}: simple and bulk strings as {@link String}, integers as {@link Long},
     * arrays as {@code List<Object>}, nil as null.
     *
     * @throws RuntimeException with Redis's message when Redis answers with an error
     */
    public Object adminCommand(String... command) {
        if (command.length == 0) {
            throw new IllegalArgumentException("no command");
        }
        return admin(command);
    }

    /**
     * Runs one admin command on a connection of its own; package-private for the cluster set-up.
     *
     * @throws IllegalStateException for a command that reaches beyond the tests' keys
     *                               ({@link ServerWideCommands}) on a server this support did not start
     */
    Object admin(String... command) {
        String operation = ServerWideCommands.operation(command);
        if (operation != null) {
            requireOwned(operation);
        }
        return RespConnection.call(host, port, ADMIN_TIMEOUT, command);
    }

    /**
     * Puts a server a previous test may have broken back in shape for the next one: restarts a
     * stopped managed server and lifts a pause. Nothing on a server the support did not start: no
     * test faults it, and a pause there is somebody else's.
     */
    void heal() {
        if (!owned) {
            return;
        }
        if (process != null && !process.isRunning()) {
            process.start();
        }
        try {
            admin("CLIENT", "UNPAUSE");
        } catch (RespConnection.RedisErrorReply e) {
            // Redis before 6.2: nothing to lift
        }
    }

    /** @return a mark for {@link #destroyFactoriesSince(int)} */
    int factoryMark() {
        return factories.mark();
    }

    /** Destroys the connection factories handed out since {@code mark}. */
    void destroyFactoriesSince(int mark) {
        factories.destroySince(mark);
    }

    /** @return the log tail of a managed server, for failure messages */
    String logTail(int lines) {
        return process == null ? "(not managed: no log)" : process.logTail(lines);
    }

    /**
     * Destroys the connection factories handed out, then stops the server if we run it; on a
     * server we did not start, deletes the keys under our prefix instead.
     */
    @Override
    public void close() {
        if (closeable) {
            closeNow();
        }
    }

    /** Closes even the JVM-wide shared server. */
    synchronized void closeNow() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            factories.destroyAll();
            if (!owned) {
                deleteOwnKeys();
            }
        } finally {
            if (owner != null) {
                try {
                    owner.close();
                } catch (Exception e) {
                    throw new IllegalStateException("could not close " + this, e);
                }
            }
        }
    }

    @Override
    public String toString() {
        String kind = managed() ? "managed" : owned ? "owned, not managed" : "not owned";
        return "RedisServer[" + uri() + ", " + kind + ", " + description + "]";
    }
}
