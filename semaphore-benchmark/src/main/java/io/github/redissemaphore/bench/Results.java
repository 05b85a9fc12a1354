package io.github.redissemaphore.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The figures of one run as a JSON tree, written to the results file ({@code -Dbench.results}; the
 * repository's is {@code docs/benchmark-results.json}, which the pages quote and
 * {@code BenchmarkDocsTest} holds them to). Each measure records what it prints under a section of
 * its own; a figure is stored as printed (whole numbers, or the decimals of the table), so a page
 * can quote it as it stands. Nothing is written unless the whole run succeeded.
 */
final class Results {

    /** Pretty-printed; keys in the order the measures put them, which is the order of their tables. */
    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private final ObjectNode root = JSON.createObjectNode();

    /** @return the top-level object of that name, made on first use; sections are in the order of first use */
    ObjectNode section(String name) {
        return root.has(name) ? (ObjectNode) root.get(name) : root.putObject(name);
    }

    /** @return a new object, to {@link ObjectNode#set} somewhere */
    static ObjectNode object() {
        return JSON.createObjectNode();
    }

    /**
     * Puts {@code value} rounded to {@code decimals} places (a whole number for 0), or null when it
     * is NaN (not measured).
     */
    static void put(ObjectNode into, String name, double value, int decimals) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            into.putNull(name);
        } else if (decimals == 0) {
            into.put(name, Math.round(value));
        } else {
            double scale = Math.pow(10, decimals);
            into.put(name, Math.round(value * scale) / scale);
        }
    }

    /** Puts {@code a / b} with 2 decimals, as {@link Report#ratio} prints it, or null when either is unknown. */
    static void ratio(ObjectNode into, String name, double a, double b) {
        put(into, name, Double.isNaN(a) || Double.isNaN(b) || b == 0 ? Double.NaN : a / b, 2);
    }

    /** Puts what each command made Redis do per pair ({@link RedisStats#perPair}), 2 decimals, those under 0.01 left out. */
    static void perPair(ObjectNode into, String name, Map<String, RedisStats.CommandStat> commands, long pairs) {
        ObjectNode counts = into.putObject(name);
        commands.forEach((command, stat) -> {
            double perPair = (double) stat.calls() / pairs;
            if (perPair >= 0.01) {
                put(counts, command, perPair, 2);
            }
        });
    }

    /** Writes the tree to {@code file}, through a file beside it, so a failed write leaves the old one. */
    void write(Path file) {
        try {
            Path absolute = file.toAbsolutePath();
            Path directory = absolute.getParent();
            if (directory != null) {
                Files.createDirectories(directory);
            }
            Path partial = absolute.resolveSibling(absolute.getFileName() + ".partial");
            Files.writeString(partial, JSON.writeValueAsString(root) + "\n", StandardCharsets.UTF_8);
            Files.move(partial, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the results file " + file, e);
        }
    }
}
