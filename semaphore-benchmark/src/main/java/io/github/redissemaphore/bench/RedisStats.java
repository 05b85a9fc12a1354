package io.github.redissemaphore.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * What Redis itself says about the load: {@code INFO commandstats} (calls and microseconds per
 * command since the last {@code CONFIG RESETSTAT}), the PING round trip, the server version, and
 * a MONITOR that counts the commands clients send. Runs on an admin connection of its own; its
 * own commands are left out of every figure.
 */
final class RedisStats implements AutoCloseable {

    /** Our own admin commands, never part of a figure (our PINGs are sent outside every window). */
    private static final Set<String> ADMIN = Set.of("info", "config", "config|resetstat", "monitor");
    private static final Pattern COMMAND_STAT =
            Pattern.compile("^cmdstat_([^:]+):calls=(\\d+),usec=(\\d+)", Pattern.MULTILINE);
    private static final Pattern VERSION = Pattern.compile("^redis_version:(\\S+)", Pattern.MULTILINE);

    private final String host;
    private final int port;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> admin;

    RedisStats(RedisClient client, String host, int port) {
        this.host = host;
        this.port = port;
        this.connection = client.connect();
        this.admin = connection.sync();
    }

    /** Calls of one command and the Redis CPU time they took (including commands a script ran). */
    record CommandStat(long calls, long usec) {
        static final CommandStat NONE = new CommandStat(0, 0);

        double usecPerCall() {
            return calls == 0 ? Double.NaN : (double) usec / calls;
        }

        CommandStat plus(CommandStat other) {
            return new CommandStat(calls + other.calls, usec + other.usec);
        }
    }

    /** Zeroes the command statistics ({@code CONFIG RESETSTAT}). */
    void reset() {
        admin.configResetstat();
    }

    /**
     * @return calls and time per command since {@link #reset()}, by name; a command a script runs
     *         (e.g. the {@code zadd} inside an EVALSHA) counts as a call of its own, and its time
     *         is also part of the script's
     */
    Map<String, CommandStat> commands() {
        Map<String, CommandStat> stats = new TreeMap<>();
        Matcher matcher = COMMAND_STAT.matcher(admin.info("commandstats"));
        while (matcher.find()) {
            if (!ADMIN.contains(matcher.group(1))) {
                stats.put(matcher.group(1), new CommandStat(Long.parseLong(matcher.group(2)),
                        Long.parseLong(matcher.group(3))));
            }
        }
        return stats;
    }

    /**
     * @return the script calls (EVAL, EVALSHA and their read-only forms) of {@code stats} added up:
     *         the commands a client sends for a semaphore operation; their time includes what the
     *         script ran
     */
    static CommandStat scripts(Map<String, CommandStat> stats) {
        return stats.entrySet().stream().filter(entry -> entry.getKey().startsWith("eval"))
                .map(Map.Entry::getValue).reduce(CommandStat.NONE, CommandStat::plus);
    }

    /** @return the script command names of {@code stats}, e.g. "evalsha" or "eval+evalsha" */
    static String scriptNames(Map<String, CommandStat> stats) {
        return String.join("+", stats.keySet().stream().filter(name -> name.startsWith("eval")).toList());
    }

    /**
     * @return "evalsha 2.00, time 2.00, ..." per pair: what {@code pairs} pairs made Redis do, by
     *         command, those under 0.01 per pair left out
     */
    static String perPair(Map<String, CommandStat> commands, long pairs) {
        StringBuilder out = new StringBuilder();
        commands.forEach((name, stat) -> {
            double perPair = (double) stat.calls() / pairs;
            if (perPair >= 0.01) {
                out.append(out.length() == 0 ? "" : ", ").append(name).append(' ').append(Report.decimal(perPair));
            }
        });
        return out.toString();
    }

    /** @return every call of {@code commands} added up: script calls and the commands they ran */
    static long calls(Map<String, CommandStat> commands) {
        return commands.values().stream().mapToLong(CommandStat::calls).sum();
    }

    /** @return {@code redis_version} of {@code INFO server} */
    String version() {
        Matcher matcher = VERSION.matcher(admin.info("server"));
        return matcher.find() ? matcher.group(1) : "unknown";
    }

    /** @return microseconds of {@code count} PING round trips, after {@code warmup} unmeasured ones */
    long[] pingMicros(int warmup, int count) {
        long[] micros = new long[count];
        for (int i = -warmup; i < count; i++) {
            long start = System.nanoTime();
            admin.ping();
            if (i >= 0) {
                micros[i] = (System.nanoTime() - start) / 1000;
            }
        }
        return micros;
    }

    /** @return a running MONITOR that counts client commands until closed */
    ClientCommands monitor() {
        return new ClientCommands(host, port);
    }

    @Override
    public void close() {
        connection.close();
    }

    /**
     * Counts, by name, the commands clients send while it runs. MONITOR tags the commands a Lua
     * script runs with "lua", so unlike INFO they can be left out: what remains is what crossed
     * the network. Costly per command, so only for measures where few commands are expected.
     */
    static final class ClientCommands implements AutoCloseable {

        private final Socket socket;
        private final ConcurrentMap<String, LongAdder> counts = new ConcurrentHashMap<>();
        private final Thread reader;

        private ClientCommands(String host, int port) {
            try {
                socket = new Socket(host, port);
                socket.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
                BufferedReader in = new BufferedReader(
                        new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                if (!"+OK".equals(in.readLine())) {
                    throw new IllegalStateException("MONITOR refused");
                }
                reader = new Thread(() -> read(in), "redis-monitor");
                reader.setDaemon(true);
                reader.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot MONITOR " + host + ":" + port, e);
            }
        }

        /** Lines look like {@code +1714000000.123456 [0 127.0.0.1:50123] "evalsha" "..." ...}. */
        private void read(BufferedReader in) {
            try {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    int bracket = line.indexOf("] \"");
                    if (line.startsWith("+") && bracket > 0 && !line.substring(0, bracket).endsWith(" lua")) {
                        int end = line.indexOf('"', bracket + 3);
                        String name = line.substring(bracket + 3, end < 0 ? line.length() : end).toLowerCase();
                        counts.computeIfAbsent(name, any -> new LongAdder()).increment();
                    }
                }
            } catch (IOException e) {
                // closed
            }
        }

        /** @return the client commands counted so far, by name, our own admin commands left out */
        Map<String, Long> counts() {
            Map<String, Long> snapshot = new TreeMap<>();
            counts.forEach((name, count) -> {
                if (!ADMIN.contains(name)) {
                    snapshot.put(name, count.sum());
                }
            });
            return snapshot;
        }

        @Override
        public void close() {
            try {
                socket.close();
                reader.join(1000);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
