package io.github.redissemaphore.sample.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The project's README, read at test time and cut into what the checks need: its fenced code blocks,
 * its inline code spans and its whole text, each with the line it starts on, so a failing check can
 * name the line.
 */
final class Readme {

    private static final Pattern SPAN = Pattern.compile("`([^`]+)`");

    /** A fenced code block: its info string ({@code yaml}, {@code java}, or empty) and its lines. */
    record Block(String info, List<String> lines, int firstLine) {

        String text() {
            return String.join("\n", lines);
        }
    }

    /** A piece of the README (a code span, a line of a block, a match) and the line it is on. */
    record Mention(String text, int line) {
    }

    private final Path root;
    private final String text;
    private final String prose;
    private final List<Block> blocks;

    private Readme(Path root, String text) {
        this.root = root;
        this.text = text;
        List<Block> found = new ArrayList<>();
        StringBuilder outsideBlocks = new StringBuilder();
        String[] lines = text.split("\n", -1);
        Block open = null;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.strip().startsWith("```")) {
                if (open == null) {
                    open = new Block(line.strip().substring(3).strip(), new ArrayList<>(), i + 2);
                } else {
                    found.add(open);
                    open = null;
                }
                outsideBlocks.append('\n');
            } else if (open != null) {
                open.lines().add(line);
                outsideBlocks.append('\n'); // keeps offsets on the same line numbers as the README
            } else {
                outsideBlocks.append(line).append('\n');
            }
        }
        this.blocks = List.copyOf(found);
        this.prose = outsideBlocks.toString();
    }

    /**
     * Finds the README of the project this test runs in: the first directory, from the working
     * directory (Surefire's is the module's) upwards, with both a {@code README.md} and a
     * {@code pom.xml}.
     */
    static Readme ofThisProject() {
        Path dir = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            Path readme = candidate.resolve("README.md");
            if (Files.isRegularFile(readme) && Files.isRegularFile(candidate.resolve("pom.xml"))) {
                try {
                    return new Readme(candidate, Files.readString(readme));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("No README.md next to a pom.xml in " + dir + " or above it");
    }

    /** @return the directory of the README: the project's root */
    Path root() {
        return root;
    }

    List<Block> blocks() {
        return blocks;
    }

    /** @return the inline code spans outside code blocks, a span over a line break joined with a space */
    List<Mention> spans() {
        List<Mention> spans = new ArrayList<>();
        Matcher span = SPAN.matcher(prose);
        while (span.find()) {
            spans.add(new Mention(span.group(1).replaceAll("\\s*\n\\s*", " ").strip(), lineAt(prose, span.start())));
        }
        return spans;
    }

    /** @return every line of every code block, with continuation lines (ending in a backslash) joined */
    List<Mention> blockLines() {
        List<Mention> lines = new ArrayList<>();
        for (Block block : blocks) {
            StringBuilder joined = new StringBuilder();
            int start = -1;
            for (int i = 0; i < block.lines().size(); i++) {
                String line = block.lines().get(i);
                start = start < 0 ? block.firstLine() + i : start;
                if (line.endsWith("\\")) {
                    joined.append(line, 0, line.length() - 1).append(' ');
                    continue;
                }
                lines.add(new Mention(joined.append(line).toString(), start));
                joined.setLength(0);
                start = -1;
            }
        }
        return lines;
    }

    /** @return the spans and the block lines: every place a command can be written */
    List<Mention> codeFragments() {
        List<Mention> fragments = new ArrayList<>(spans());
        fragments.addAll(blockLines());
        return fragments;
    }

    /** @return every line outside code blocks, numbered as in the README (a block's lines are empty here) */
    List<Mention> proseLines() {
        List<Mention> lines = new ArrayList<>();
        String[] all = prose.split("\n", -1);
        for (int i = 0; i < all.length; i++) {
            lines.add(new Mention(all[i], i + 1));
        }
        return lines;
    }

    /** @return the whole README */
    String text() {
        return text;
    }

    /** @return the line of the README that this offset of {@link #text()} is on */
    int lineAt(int offset) {
        return lineAt(text, offset);
    }

    /** @return every match of {@code pattern} in the whole README (blocks included), group {@code group} */
    List<Mention> find(Pattern pattern, int group) {
        List<Mention> found = new ArrayList<>();
        Matcher matcher = pattern.matcher(text);
        while (matcher.find()) {
            found.add(new Mention(matcher.group(group), lineAt(text, matcher.start(group))));
        }
        return found;
    }

    private static int lineAt(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }
}
