package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis server for a test: where it is, connection factories on it, inspection and fault injection.
 *
 * <p>A server is <em>managed</em> when this support started its process (a {@code redis-server} from
 * the PATH or the embedded-redis jar): only then can it be {@link #stop() stopped}, {@link #start()
 * restarted} on the same port and {@link #kill() killed}. A server from {@code REDIS_URL} or a Docker
 * container is not managed. Get a managed one with {@link Dedicated @Dedicated} or
 * {@link RedisServers#start()}.
 *
 * <p>Admin calls ({@link #flushAll()}, {@link #commandCalls()}, {@link #pause(Duration)}...) go over
 * a short-lived plain socket of their own, never over a factory's connections; they show up in the
 * command statistics only as themselves ({@code flushall}, {@code info}, {@code client|pause}...),
 * so count the commands you care about, or differences between two readings.
 *
 * <p>Closing destroys every connection factory handed out and stops the server if managed (removes
 * the container if from Docker; leaves a REDIS_URL server alone).
 */
public final class RedisServer implements AutoCloseable {

    /** Long enough for a command queued behind a {@link #pause} or {@link #debugSleep} of a test. */
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern COMMAND_STAT = Pattern.compile("^cmdstat_([^:]+):calls=(\\d+)", Pattern.MULTILINE);
    private static final Pattern TOTAL_COMMANDS = Pattern.compile("^total_commands_processed:(\\d+)", Pattern.MULTILINE);

    private final String host;
    private final int port;
    private final RedisProcess process;
    private final AutoCloseable owner;
    private final String description;
    private final ConnectionFactories factories = new ConnectionFactories();
    private final boolean closeable;
    private boolean closed;

    private RedisServer(String host, int port, RedisProcess process, AutoCloseable owner, String description,
            boolean closeable) {
        this.host = host;
        this.port = port;
        this.process = process;
        this.owner = owner;
        this.description = description;
        this.closeable = closeable;
    }

    /** A server whose process we run. */
    static RedisServer managed(RedisProcess process) {
        return new RedisServer(RedisProcess.HOST, process.port(), process, process, process.binary().toString(), true);
    }

    /**
     * A server we do not run; {@code owner} (may be null) is closed with it, e.g. to remove a
     * container.
     */
    static RedisServer external(String host, int port, String description, AutoCloseable owner) {
        return new RedisServer(host, port, null, owner, description, true);
    }

    /** The same server, but {@link #close()} does nothing: for the JVM-wide shared one. */
    RedisServer unclosable() {
        return new RedisServer(host, port, process, owner, description, false);
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
        return factories.standalone(host, port, commandTimeout);
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
            throw new UnsupportedOperationException("cannot " + action + " " + this + ": it is not managed by the "
                    + "test support (REDIS_URL or Docker); ask for a @Dedicated RedisServer or RedisServers.start()");
        }
        return process;
    }

    /**
     * Suspends every client, ours included, for {@code duration} ({@code CLIENT PAUSE ms ALL}):
     * commands sent meanwhile are answered once it is over. Returns at once.
     */
    public void pause(Duration duration) {
        admin("CLIENT", "PAUSE", String.valueOf(duration.toMillis()), "ALL");
    }

    /**
     * Blocks the whole server for {@code duration} ({@code DEBUG SLEEP}), like a stall. Returns once
     * the server is asleep (a probe PING goes unanswered), not when it wakes up.
     *
     * @return completes when the server is awake again
     */
    public CompletableFuture<Void> debugSleep(Duration duration) {
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
        // An error reply (DEBUG disabled, e.g. on a REDIS_URL server) surfaces here.
        awake.join();
        return awake;
    }

    /** Closes every pub/sub client connection ({@code CLIENT KILL TYPE pubsub}). @return how many */
    public long killPubSubClients() {
        return (Long) admin("CLIENT", "KILL", "TYPE", "pubsub");
    }

    /** Deletes every key of every database. */
    public void flushAll() {
        admin("FLUSHALL");
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

    /** @return the keys matching {@code pattern} ({@code KEYS}, fine on a test server), sorted */
    public List<String> keys(String pattern) {
        List<String> keys = new ArrayList<>();
        for (Object key : (List<?>) admin("KEYS", pattern)) {
            keys.add((String) key);
        }
        Collections.sort(keys);
        return keys;
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

    /** Runs one admin command on a connection of its own; package-private for the cluster set-up. */
    Object admin(String... command) {
        return RespConnection.call(host, port, ADMIN_TIMEOUT, command);
    }

    /**
     * Puts a server a previous test may have broken back in shape for the next one: restarts a
     * stopped managed server and lifts a pause.
     */
    void heal() {
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

    /** Destroys the connection factories handed out, then stops the server if we run it. */
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
        return "RedisServer[" + uri() + (managed() ? ", managed, " : ", not managed, ") + description + "]";
    }
}
