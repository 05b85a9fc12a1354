package io.github.redissemaphore.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;

/**
 * Counts the commands clients send to one Redis server, with MONITOR on a raw socket. Unlike
 * INFO commandstats it tells a client's own commands apart from those a Lua script runs (MONITOR
 * tags those "lua"), so "exactly one Redis call per acquire" can be checked as a count.
 */
final class CommandMonitor implements AutoCloseable {

    private final Socket socket;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    CommandMonitor(String host, int port) throws IOException {
        socket = new Socket(host, port);
        OutputStream out = socket.getOutputStream();
        out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        reader = new Thread(() -> {
            try {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // socket closed
            }
        }, "redis-monitor-" + port);
        reader.setDaemon(true);
        reader.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> lines.contains("+OK"));
    }

    /**
     * Runs {@code action} and returns the commands clients sent meanwhile to any of the monitored
     * servers (script-internal ones left out). A marker sent after the action, on a socket of the monitor's own, and seen by
     * the monitor makes sure every command of the action has been counted.
     */
    static List<String> commandsDuring(List<CommandMonitor> monitors, Runnable action) {
        return during(monitors, action, line -> !line.contains(" lua]"));
    }

    /** Like {@link #commandsDuring}, but returns the commands scripts ran meanwhile (MONITOR's "lua" lines). */
    static List<String> scriptCommandsDuring(List<CommandMonitor> monitors, Runnable action) {
        return during(monitors, action, line -> line.contains(" lua]"));
    }

    /**
     * Like {@link #commandsDuring}, but returns both: each server's lines in the order it ran them,
     * so the commands a script ran follow the call of that script.
     */
    static List<String> allCommandsDuring(List<CommandMonitor> monitors, Runnable action) {
        return during(monitors, action, line -> true);
    }

    private static List<String> during(List<CommandMonitor> monitors, Runnable action, Predicate<String> keep) {
        // Everything sent before the action has been seen once a marker sent now is seen.
        int[] starts = monitors.stream().mapToInt(monitor -> monitor.markerSeenAt(monitor.sendMarker()) + 1).toArray();
        action.run();
        List<String> commands = new ArrayList<>();
        for (int i = 0; i < monitors.size(); i++) {
            commands.addAll(monitors.get(i).commandsSince(starts[i], keep));
        }
        return commands;
    }

    /**
     * Waits until the monitor has seen a line that {@code wanted} accepts, from now on or before:
     * for a test that must go on only once a call it does not make itself (a renewal tick, say) has
     * reached the server.
     */
    void awaitLine(Duration atMost, Predicate<String> wanted) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(10)).until(() -> lines.stream().anyMatch(wanted));
    }

    private String sendMarker() {
        String marker = "marker-" + UUID.randomUUID();
        try (Socket markerSocket = new Socket(socket.getInetAddress(), socket.getPort())) {
            markerSocket.getOutputStream().write(("ECHO " + marker + "\r\n").getBytes(StandardCharsets.US_ASCII));
            markerSocket.getOutputStream().flush();
            markerSocket.getInputStream().read();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return marker;
    }

    /** @return the index of the line with the marker, once the monitor has seen it */
    private int markerSeenAt(String marker) {
        await().atMost(Duration.ofSeconds(5)).until(() -> lines.stream().anyMatch(line -> line.contains(marker)));
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).contains(marker)) {
                return i;
            }
        }
        throw new IllegalStateException("marker vanished");
    }

    private List<String> commandsSince(int start, Predicate<String> keep) {
        String marker = sendMarker();
        markerSeenAt(marker);
        List<String> commands = new ArrayList<>();
        for (String line : lines.subList(start, lines.size())) {
            if (line.contains(marker)) {
                break;
            }
            if (line.startsWith("+") && !line.startsWith("+OK") && keep.test(line)) {
                commands.add(line);
            }
        }
        return commands;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
