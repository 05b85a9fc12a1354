package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code redis-server} child process on 127.0.0.1, in a temp directory of its own (its log,
 * and for cluster nodes the nodes.conf, live there). It can be stopped, killed and started again on
 * the same port, which is what the fault-injection of {@link RedisServer} is made of.
 *
 * <p>Start-up counts as done when PING answers and INFO reports our own process id: a PONG from
 * some other Redis that won the race for the port must not pass for ours.
 */
final class RedisProcess implements AutoCloseable {

    static final String HOST = "127.0.0.1";

    private static final Logger LOG = LoggerFactory.getLogger(RedisProcess.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
    private static final int PORT_ATTEMPTS = 5;
    private static final Pattern PROCESS_ID = Pattern.compile("process_id:(\\d+)");

    private final RedisBinary binary;
    private final int port;
    private final List<String> extraArguments;
    /** Before every other argument: a Sentinel's config file, which Redis insists comes first. */
    private final List<String> leadingArguments = new ArrayList<>();
    /** Before the executable: a program that runs it, e.g. valgrind and its options; usually none. */
    private final List<String> wrapper = new ArrayList<>();
    private final Path directory;
    private final Path log;
    private Process process;
    private boolean closed;

    private RedisProcess(RedisBinary binary, int port, List<String> extraArguments) throws IOException {
        this.binary = binary;
        this.port = port;
        this.extraArguments = List.copyOf(extraArguments);
        this.directory = Files.createTempDirectory("redis-" + port + "-");
        this.log = directory.resolve("redis.log");
        ProcessReaper.deleteAtExit(directory);
    }

    /**
     * Starts a process on a port from {@code ports}, trying another port when that one turns out to
     * be taken.
     *
     * @param extraArguments arguments after the common ones, given the chosen port
     */
    static RedisProcess start(RedisBinary binary, IntSupplier ports, IntFunction<List<String>> extraArguments) {
        return start(binary, ports, extraArguments, process -> { });
    }

    private static RedisProcess start(RedisBinary binary, IntSupplier ports, IntFunction<List<String>> extraArguments,
                                      java.util.function.Consumer<RedisProcess> prepare) {
        PortTakenException lastCollision = null;
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            int port = ports.getAsInt();
            RedisProcess redis;
            try {
                redis = new RedisProcess(binary, port, extraArguments.apply(port));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a temp directory for redis-server", e);
            }
            try {
                prepare.accept(redis);
                redis.start();
                return redis;
            } catch (PortTakenException e) {
                lastCollision = e;
                redis.close();
                LOG.debug("port {} was taken, trying another one", port);
            } catch (RuntimeException | Error e) {
                redis.close();
                throw e;
            }
        }
        throw new IllegalStateException("could not start redis-server on a free port in " + PORT_ATTEMPTS + " attempts",
                lastCollision);
    }

    /**
     * Starts a Redis Sentinel (the same binary with {@code --sentinel}) that monitors the master
     * on {@code masterPort} as {@code masterName}, with quorum 1 and a 1 s down-after, so a
     * failover takes a second or two.
     */
    static RedisProcess startSentinel(RedisBinary binary, String masterName, int masterPort) {
        return start(binary, FreePorts::find, port -> List.of("--sentinel"), sentinel -> {
            Path config = sentinel.directory.resolve("sentinel.conf");
            try {
                Files.writeString(config, String.join("\n",
                        "sentinel monitor " + masterName + " " + HOST + " " + masterPort + " 1",
                        "sentinel down-after-milliseconds " + masterName + " 1000",
                        "sentinel failover-timeout " + masterName + " 5000", ""));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write a Sentinel config", e);
            }
            sentinel.leadingArguments.add(config.toString());
        });
    }

    /** @return a process on a free port, with no extra arguments */
    static RedisProcess start(RedisBinary binary) {
        return start(binary, FreePorts::find, port -> List.of());
    }

    /**
     * @return a process on a free port, with no extra arguments, whose executable is run by the
     *         command {@code wrapper} (a program and its options, the executable and its arguments
     *         following them), at every start; the wrapper must end by executing it in the same
     *         process, as {@code valgrind} and {@code exec} do, for the start-up check of the
     *         process id to pass
     */
    static RedisProcess startWrapped(RedisBinary binary, List<String> wrapper) {
        List<String> command = List.copyOf(wrapper);
        return start(binary, FreePorts::find, port -> List.of(), redis -> redis.wrapper.addAll(command));
    }

    /**
     * @return a process on {@code port}, with no extra arguments; no other port is tried, so a
     *         taken one fails with {@link PortTakenException}
     */
    static RedisProcess startOn(RedisBinary binary, int port) {
        RedisProcess redis;
        try {
            redis = new RedisProcess(binary, port, List.of());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp directory for redis-server", e);
        }
        try {
            redis.start();
            return redis;
        } catch (RuntimeException | Error e) {
            redis.close();
            throw e;
        }
    }

    /** Starts the process on its port (again), returning once it answers; no-op when it runs. */
    synchronized void start() {
        if (closed) {
            throw new IllegalStateException("redis-server on port " + port + " was closed");
        }
        if (isRunning()) {
            return;
        }
        List<String> command = new ArrayList<>(wrapper);
        command.add(binary.executable().toString());
        command.addAll(leadingArguments);
        command.addAll(List.of(
                "--port", String.valueOf(port),
                "--bind", HOST,
                "--protected-mode", "no",
                "--daemonize", "no",
                // No persistence: a restart must come back empty, like a Redis that lost its data,
                // and nothing may be written outside the temp directory.
                "--save", "",
                "--appendonly", "no",
                "--dir", directory.toString()));
        command.addAll(binary.versionSpecificArguments());
        command.addAll(extraArguments);
        try {
            process = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    // Appended, so the log of a restarted server keeps what happened before.
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        }
        ProcessReaper.register(process);
        awaitAnswer(process);
        LOG.info("started {} on {}:{} (pid {})", binary, HOST, port, process.pid());
    }

    private void awaitAnswer(Process started) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!started.isAlive()) {
                forgetProcess();
                String tail = logTail(30);
                if (tail.contains("Address already in use")) {
                    throw new PortTakenException(port);
                }
                throw new IllegalStateException("redis-server on port " + port + " exited with code "
                        + started.exitValue() + "; log tail:\n" + tail);
            }
            Long pid = answeringPid();
            if (pid != null) {
                if (pid == started.pid()) {
                    return;
                }
                // Another Redis answers on "our" port; ours cannot bind it and exits (or is killed
                // here). Waiting for the port to close would wait for the other one.
                started.destroyForcibly();
                forgetProcess();
                throw new PortTakenException(port);
            }
            pause(10);
        }
        kill();
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                + START_TIMEOUT.toSeconds() + " s; log tail:\n" + logTail(30));
    }

    /** @return the process id of the Redis answering on our port, or null while none does */
    private Long answeringPid() {
        try (RespConnection connection = RespConnection.open(HOST, port, PROBE_TIMEOUT)) {
            if (!"PONG".equals(connection.call("PING"))) {
                return null;
            }
            Matcher matcher = PROCESS_ID.matcher(String.valueOf(connection.call("INFO", "server")));
            return matcher.find() ? Long.parseLong(matcher.group(1)) : null;
        } catch (IOException | RespConnection.RedisErrorReply e) {
            // Not listening yet, or still loading.
            return null;
        }
    }

    /**
     * Stops the process with {@code SHUTDOWN NOSAVE} (a kill if that does not work in time) and
     * returns once the port is closed. No-op when it does not run.
     */
    synchronized void stop() {
        if (process == null) {
            return;
        }
        if (process.isAlive()) {
            try (RespConnection connection = RespConnection.open(HOST, port, Duration.ofSeconds(2))) {
                connection.send("SHUTDOWN", "NOSAVE");
                connection.read();
            } catch (IOException | RespConnection.RedisErrorReply e) {
                // Expected: SHUTDOWN answers by closing the connection.
            }
            try {
                if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    // Blocked by CLIENT PAUSE or DEBUG SLEEP, for instance.
                    LOG.warn("redis-server on port {} ignored SHUTDOWN, killing it", port);
                    process.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        forgetProcess();
        awaitPortClosed();
    }

    /** Kills the process with SIGKILL, like a crash; no-op when it does not run. */
    synchronized void kill() {
        if (process == null) {
            return;
        }
        // Process.destroyForcibly() is SIGKILL on Linux and mac.
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        forgetProcess();
        awaitPortClosed();
    }

    private void forgetProcess() {
        if (process != null) {
            ProcessReaper.forget(process);
            process = null;
        }
    }

    private void awaitPortClosed() {
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        while (FreePorts.isListening(HOST, port)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("port " + port + " still answers after redis-server stopped");
            }
            pause(10);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server", e);
        }
    }

    /** @return whether the process is alive */
    synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** @return the port, the same across restarts */
    int port() {
        return port;
    }

    /**
     * @return the value that follows {@code name} (e.g. {@code "--tls-port"}) among the extra
     *         arguments this process was started with, or null when there is none
     */
    String argument(String name) {
        int index = extraArguments.indexOf(name);
        return index < 0 || index + 1 >= extraArguments.size() ? null : extraArguments.get(index + 1);
    }

    /** @return the executable this process runs */
    RedisBinary binary() {
        return binary;
    }

    /** @return the last {@code lines} lines of the server's log, for error messages */
    String logTail(int lines) {
        try {
            if (!Files.exists(log)) {
                return "(no log)";
            }
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** Stops the process (killing it if need be) and deletes its directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stop();
        } catch (RuntimeException e) {
            kill();
        } finally {
            ProcessReaper.delete(directory);
        }
    }

    @Override
    public String toString() {
        return "redis-server on " + HOST + ":" + port + (isRunning() ? " (running)" : " (stopped)");
    }

    /** Redis could not bind the port we picked: someone else took it meanwhile. */
    static final class PortTakenException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        PortTakenException(int port) {
            super("port " + port + " was taken by another process");
        }
    }
}
