package io.github.redissemaphore.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The last resort of process hygiene: a JVM shutdown hook that kills every Redis process still
 * running and deletes the temp directories still there. Handles normally clean up themselves on
 * close; this catches what a crashed test, a forgotten {@code close()} or Ctrl-C leaves behind, so no
 * {@code redis-server} outlives the test JVM (short of a SIGKILL of the JVM itself).
 */
final class ProcessReaper {

    private static final Set<Process> PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Set<Path> DIRECTORIES = ConcurrentHashMap.newKeySet();
    private static final Set<AutoCloseable> RESOURCES = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ProcessReaper::reap, "redis-test-reaper"));
    }

    private ProcessReaper() {
    }

    /** Kills {@code process} at JVM exit unless {@link #forget(Process)} was called first. */
    static void register(Process process) {
        PROCESSES.add(process);
    }

    static void forget(Process process) {
        PROCESSES.remove(process);
    }

    /** Deletes {@code directory} (recursively) at JVM exit unless {@link #delete(Path)} did it before. */
    static void deleteAtExit(Path directory) {
        DIRECTORIES.add(directory);
    }

    /** Closes {@code resource} at JVM exit unless {@link #forget(AutoCloseable)} was called first. */
    static void closeAtExit(AutoCloseable resource) {
        RESOURCES.add(resource);
    }

    static void forget(AutoCloseable resource) {
        RESOURCES.remove(resource);
    }

    /** Deletes {@code directory} with its content now, quietly: a leftover temp file must not fail a test. */
    static void delete(Path directory) {
        DIRECTORIES.remove(directory);
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // best effort
        }
    }

    private static void reap() {
        for (AutoCloseable resource : RESOURCES) {
            try {
                resource.close();
            } catch (Exception | Error e) {
                // keep going: the processes below matter more
            }
        }
        for (Process process : PROCESSES) {
            process.destroyForcibly();
        }
        for (Process process : PROCESSES) {
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                break;
            }
        }
        for (Path directory : DIRECTORIES) {
            delete(directory);
        }
    }
}
