package io.github.redissemaphore.bench;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A {@code redis-server} of its own (the binary the benchmark would use: PATH, else the
 * embedded-redis jar's) run under valgrind's callgrind, which counts the instructions the server
 * executes: a figure that, unlike time, a busy machine does not change.
 *
 * <p>The server starts with instrumentation off ({@code --instr-atstart=no}), so start-up and
 * everything between windows cost nothing. {@link #count(Work)} switches it on and zeroes the
 * counters with {@code callgrind_control} before the work, dumps them and switches it off after,
 * and reads {@code totals:} from the dump file that appeared. What the server does by itself
 * meanwhile (its cron runs 10 times a second) is in the count too: {@link #idleRate(Duration)}
 * measures it the same way over a window with nothing to do, for the caller to subtract.
 *
 * <p>The server runs about 50 times slower than without valgrind: give its clients generous timeouts.
 */
final class Callgrind implements AutoCloseable {

    /** The tools this needs on the PATH; callgrind_control comes with valgrind. */
    static final List<String> TOOLS = List.of("valgrind", "callgrind_control");
    static final String INSTALL_HINT = "on Debian or Ubuntu: apt-get install valgrind";

    /** One callgrind_control call waits for the server to come to it; seconds under load, never minutes. */
    private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(60);
    private static final Pattern TOTALS = Pattern.compile("^totals:\\s*(\\d+)", Pattern.MULTILINE);
    private static final Pattern PROCESS_ID = Pattern.compile("^process_id:(\\d+)", Pattern.MULTILINE);

    private final Path outputs;
    private final RedisServer server;
    private final long pid;

    private Callgrind(Path outputs, RedisServer server) {
        this.outputs = outputs;
        this.server = server;
        Matcher matcher = PROCESS_ID.matcher(server.info("server"));
        if (!matcher.find()) {
            throw new IllegalStateException(server + " does not tell its process id");
        }
        // valgrind becomes the server process: the pid Redis reports is the one to control.
        this.pid = Long.parseLong(matcher.group(1));
    }

    /** Work whose instructions are counted. */
    @FunctionalInterface
    interface Work {
        void run() throws Exception;
    }

    /** What a window counted: instructions the server executed, and how long the work took. */
    record Count(long instructions, long nanos) {

        double seconds() {
            return nanos / 1e9;
        }
    }

    /** @return the tools of {@link #TOOLS} that are not on the PATH; empty when callgrind can be used */
    static List<String> missingTools() {
        return TOOLS.stream().filter(tool -> !onPath(tool)).toList();
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        return path != null && Stream.of(path.split(Pattern.quote(File.pathSeparator)))
                .filter(directory -> !directory.isBlank()).map(directory -> Path.of(directory, program))
                .anyMatch(file -> Files.isRegularFile(file) && Files.isExecutable(file));
    }

    /** @return a server under callgrind on a free port of 127.0.0.1, answering; the caller closes it */
    static Callgrind start() {
        Path outputs;
        try {
            outputs = Files.createTempDirectory("redis-callgrind-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for callgrind's files", e);
        }
        try {
            // %p: the file names carry the pid, so a restart (which the support may do) does not mix files.
            RedisServer server = RedisServers.startWrapped(List.of("valgrind", "--tool=callgrind",
                    "--instr-atstart=no", "--callgrind-out-file=" + outputs.resolve("cg.%p")));
            return new Callgrind(outputs, server);
        } catch (RuntimeException | Error e) {
            delete(outputs);
            throw e;
        }
    }

    /** @return the server, to connect clients to */
    RedisServer server() {
        return server;
    }

    /** @return e.g. "valgrind-3.19.0" */
    static String valgrindVersion() {
        return run(List.of("valgrind", "--version")).trim();
    }

    /**
     * Counts the instructions the server executes while {@code work} runs. Only the work's own
     * calls should reach the server in the window: open connections and load scripts before.
     */
    Count count(Work work) throws Exception {
        control("-i", "on");
        try {
            control("-z");
            long begin = System.nanoTime();
            work.run();
            long nanos = System.nanoTime() - begin;
            Set<Path> before = dumps();
            control("-d");
            return new Count(totals(newDump(before)), nanos);
        } finally {
            control("-i", "off");
        }
    }

    /** @return instructions per second the server executes with nothing to do, over {@code window} */
    double idleRate(Duration window) throws Exception {
        Count idle = count(() -> Thread.sleep(window.toMillis()));
        return idle.instructions() / idle.seconds();
    }

    private void control(String... options) {
        List<String> command = new ArrayList<>(List.of("callgrind_control"));
        command.addAll(List.of(options));
        command.add(String.valueOf(pid));
        run(command);
    }

    /** @return the output of {@code command}, which must exit with 0 within {@link #CONTROL_TIMEOUT} */
    private static String run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            // Read before waiting: a full pipe would block the program.
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(CONTROL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not return within "
                        + CONTROL_TIMEOUT.toSeconds() + " s");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed with exit code "
                        + process.exitValue() + ": " + output.trim());
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        }
    }

    /** @return the dump files in the output directory: cg.PID.N, one per {@code -d} */
    private Set<Path> dumps() throws IOException {
        try (Stream<Path> files = Files.list(outputs)) {
            return files.filter(file -> file.getFileName().toString().startsWith("cg." + pid + "."))
                    .collect(Collectors.toSet());
        }
    }

    /** @return the one dump file that is not among {@code before} */
    private Path newDump(Set<Path> before) throws IOException {
        List<Path> added = dumps().stream().filter(file -> !before.contains(file)).toList();
        if (added.size() != 1) {
            throw new IllegalStateException("expected one new callgrind dump in " + outputs + " after "
                    + "callgrind_control -d " + pid + ", found " + added);
        }
        return added.get(0);
    }

    private static long totals(Path dump) throws IOException {
        Matcher matcher = TOTALS.matcher(Files.readString(dump, StandardCharsets.UTF_8));
        if (!matcher.find()) {
            throw new IllegalStateException("no 'totals:' line in callgrind dump " + dump);
        }
        return Long.parseLong(matcher.group(1));
    }

    /** Stops the server (valgrind writes its last file then) and deletes callgrind's files. */
    @Override
    public void close() {
        try {
            server.close();
        } finally {
            delete(outputs);
        }
    }

    private static void delete(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + directory + ": " + e);
        }
    }
}
