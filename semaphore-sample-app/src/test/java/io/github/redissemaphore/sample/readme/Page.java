package io.github.redissemaphore.sample.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Markdown page of the project's documentation (the README, a page of {@code docs/}), read at
 * test time and cut into what the checks need: its fenced code blocks, its inline code spans, its
 * headings and its whole text, each with the line it starts on, so a failing check can name the
 * page and the line.
 */
final class Page {

    private static final Pattern SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6}) (.+)$");

    /** A fenced code block: its info string ({@code yaml}, {@code java}, or empty), its lines, its page. */
    record Block(String info, List<String> lines, int firstLine, Page page) {

        String text() {
            return String.join("\n", lines);
        }

        /** @return {@code <page> line <n>}, for the name of a check */
        String where() {
            return page.name() + " line " + firstLine;
        }
    }

    /** A piece of a page (a code span, a line of a block, a match), the line it is on, and the page. */
    record Mention(String text, int line, Page page) {

        /** @return {@code <page> line <n>}, for the name of a check */
        String where() {
            return page.name() + " line " + line;
        }
    }

    private final Path file;
    private final String name;
    private final String text;
    private final String prose;
    private final List<Block> blocks;

    /**
     * @param file the page
     * @param name how checks name it: its path from the project's root, such as {@code docs/operating.md}
     */
    Page(Path file, String name) {
        this.file = file;
        this.name = name;
        try {
            this.text = Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Block> found = new ArrayList<>();
        StringBuilder outsideBlocks = new StringBuilder();
        String[] lines = text.split("\n", -1);
        Block open = null;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.strip().startsWith("```")) {
                if (open == null) {
                    open = new Block(line.strip().substring(3).strip(), new ArrayList<>(), i + 2, this);
                } else {
                    found.add(open);
                    open = null;
                }
                outsideBlocks.append('\n');
            } else if (open != null) {
                open.lines().add(line);
                outsideBlocks.append('\n'); // keeps offsets on the same line numbers as the page
            } else {
                outsideBlocks.append(line).append('\n');
            }
        }
        this.blocks = List.copyOf(found);
        this.prose = outsideBlocks.toString();
    }

    /** @return the page's path from the project's root, such as {@code README.md} or {@code docs/guarantees.md} */
    String name() {
        return name;
    }

    Path file() {
        return file;
    }

    List<Block> blocks() {
        return blocks;
    }

    /** @return the inline code spans outside code blocks, a span over a line break joined with a space */
    List<Mention> spans() {
        List<Mention> spans = new ArrayList<>();
        Matcher span = SPAN.matcher(prose);
        while (span.find()) {
            spans.add(new Mention(span.group(1).replaceAll("\\s*\n\\s*", " ").strip(), lineAt(prose, span.start()),
                    this));
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
                lines.add(new Mention(joined.append(line).toString(), start, this));
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

    /** @return every line outside code blocks, numbered as in the page (a block's lines are empty here) */
    List<Mention> proseLines() {
        List<Mention> lines = new ArrayList<>();
        String[] all = prose.split("\n", -1);
        for (int i = 0; i < all.length; i++) {
            lines.add(new Mention(all[i], i + 1, this));
        }
        return lines;
    }

    /** @return the headings ({@code ## Guarantees}), outside code blocks */
    List<Mention> headings() {
        return proseLines().stream().filter(line -> HEADING.matcher(line.text()).matches()).toList();
    }

    /** @return the anchors GitHub gives the headings of this page */
    List<String> anchors() {
        return headings().stream().map(heading -> anchor(heading.text())).toList();
    }

    /** @return the whole page */
    String text() {
        return text;
    }

    /** @return the line of the page that this offset of {@link #text()} is on */
    int lineAt(int offset) {
        return lineAt(text, offset);
    }

    /** @return every match of {@code pattern} in the whole page (blocks included), group {@code group} */
    List<Mention> find(Pattern pattern, int group) {
        List<Mention> found = new ArrayList<>();
        Matcher matcher = pattern.matcher(text);
        while (matcher.find()) {
            found.add(new Mention(matcher.group(group), lineAt(text, matcher.start(group)), this));
        }
        return found;
    }

    /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
    static String anchor(String heading) {
        Matcher matched = HEADING.matcher(heading);
        String text = matched.matches() ? matched.group(2) : heading;
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }

    @Override
    public String toString() {
        return name;
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
