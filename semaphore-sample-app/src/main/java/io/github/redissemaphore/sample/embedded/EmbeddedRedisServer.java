package io.github.redissemaphore.sample.embedded;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import redis.embedded.core.ExecutableProvider;

/**
 * A {@code redis-server} child process on a free port of 127.0.0.1, run from the binary that the
 * {@code com.github.codemonstur:embedded-redis} jar ships for this OS and CPU. Nothing is persisted:
 * the data lives as long as the process.
 *
 * <p>The process is run here rather than through that library's {@code RedisServer}, because the
 * library stops its server from a JVM shutdown hook of its own, which races with the application
 * context's shutdown (permits still being released would hit a dead Redis); here the owner decides
 * when {@link #close()} runs.
 */
public final class EmbeddedRedisServer implements AutoCloseable {

    private static final Log LOG = LogFactory.getLog(EmbeddedRedisServer.class);
    private static final String HOST = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
    private static final int PORT_ATTEMPTS = 5;
    private static final int OUTPUT_LINES_KEPT = 30;

    private final int port;
    private final Path directory;
    private final Process process;

    private EmbeddedRedisServer(int port, Path directory, Process process) {
        this.port = port;
        this.directory = directory;
        this.process = process;
    }

    /**
     * Starts a server on a free port and returns once it accepts connections. A port taken by
     * someone else between choosing and binding it is noticed, and another one tried.
     */
    public static EmbeddedRedisServer start() {
        PortTaken last = null;
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            try {
                return startOn(freePort());
            } catch (PortTaken e) {
                last = e;
            }
        }
        throw new IllegalStateException("could not start an embedded Redis on a free port", last);
    }

    private static EmbeddedRedisServer startOn(int port) {
        Path directory;
        Process process;
        try {
            directory = Files.createTempDirectory("sample-redis-");
            process = new ProcessBuilder(List.of(Binary.FILE.getPath(),
                    "--port", String.valueOf(port),
                    "--bind", HOST,
                    "--daemonize", "no",
                    // A local stand-in: nothing written to disk, nothing left behind.
                    "--save", "",
                    "--appendonly", "no",
                    "--dir", directory.toString()))
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run the embedded redis-server " + Binary.FILE, e);
        }
        EmbeddedRedisServer server = new EmbeddedRedisServer(port, directory, process);
        server.awaitReady();
        return server;
    }

    /** Reads the server's output until it says it is ready, then keeps draining it at DEBUG. */
    private void awaitReady() {
        CompletableFuture<Void> ready = new CompletableFuture<>();
        Deque<String> output = new ArrayDeque<>();
        Thread reader = new Thread(() -> drain(ready, output), "embedded-redis-" + port);
        reader.setDaemon(true);
        reader.start();
        try {
            ready.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            close();
            String log = String.join("\n", snapshot(output));
            if (log.contains("Address already in use")) {
                throw new PortTaken(port);
            }
            throw new IllegalStateException("the embedded redis-server did not start on port " + port + ":\n" + log, e);
        } catch (InterruptedException e) {
            close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the embedded redis-server", e);
        }
    }

    private void drain(CompletableFuture<Void> ready, Deque<String> output) {
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                LOG.debug("redis-server:" + port + " " + line);
                if (!ready.isDone()) {
                    synchronized (output) {
                        output.addLast(line);
                        if (output.size() > OUTPUT_LINES_KEPT) {
                            output.removeFirst();
                        }
                    }
                    if (line.contains("Ready to accept connections")) {
                        ready.complete(null);
                    }
                }
            }
        } catch (IOException e) {
            // The stream closes when the process ends; what it said so far is in output.
        }
        ready.completeExceptionally(new IllegalStateException("redis-server exited"));
    }

    private static List<String> snapshot(Deque<String> output) {
        synchronized (output) {
            return List.copyOf(output);
        }
    }

    /** @return the port it listens on, on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return {@code redis://127.0.0.1:<port>} */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /** @return the address to connect to */
    public String host() {
        return HOST;
    }

    /** Stops the server (its data is gone) and removes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        deleteDirectory();
    }

    private void deleteDirectory() {
        File[] files = directory.toFile().listFiles();
        if (files != null) {
            for (File file : files) {
                file.delete();
            }
        }
        directory.toFile().delete();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on " + HOST, e);
        }
    }

    @Override
    public String toString() {
        return "embedded Redis at " + HOST + ":" + port;
    }

    /** The binary, extracted from the jar once per JVM (it is 10 MB) by the library's own provider. */
    private static final class Binary {

        static final File FILE = extract();

        private static File extract() {
            try {
                return ExecutableProvider.newJarResourceProvider().get();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot extract redis-server from the embedded-redis jar", e);
            }
        }
    }

    /** Someone else bound the port between our choosing it and Redis binding it. */
    private static final class PortTaken extends RuntimeException {

        private static final long serialVersionUID = 1L;

        PortTaken(int port) {
            super("port " + port + " was taken");
        }
    }
}
