package io.github.redissemaphore.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.databind.JsonNode;

/**
 * Checks the figures a page quotes against the results file (docs/benchmark-results.json), by the
 * markers the page puts after them (the scheme at the top of docs/benchmark.md):
 * <ul>
 * <li>{@code 178,320<!-- bench: redisCost.ours.uncontended.instructionsPerPair -->}: the number
 *     right before the marker must be the file's figure at that path (keys separated by dots),
 *     rounded to as many decimals as the page shows; a trailing {@code x} (a ratio) is allowed, a
 *     trailing {@code k} means thousands ({@code 216k} is 216,124 rounded);</li>
 * <li>a path to a text ({@code run.redisson}): the page's text right before the marker must end
 *     with it ({@code Redisson 4.7.0<!-- bench: run.redisson -->});</li>
 * <li>{@code <!-- bench: none -->}: the number before it is no figure of the run (a target, a
 *     setting), said so on purpose.</li>
 * </ul>
 * In the checked sections, a figure-shaped number without a marker is a problem too: one with a
 * thousands separator, a decimal point, a {@code x} or {@code k} suffix, four digits or more, and
 * any number in a table cell but the first column and the header row. Fenced code blocks, inline
 * code and link targets are not read.
 */
final class QuotedFigures {

    static final Pattern MARKER = Pattern.compile("<!--\\s*bench:\\s*([A-Za-z0-9_.]+)\\s*-->");
    /** The number a marker follows, with its optional suffix, at the end of the text before the marker. */
    private static final Pattern FIGURE_BEFORE = Pattern.compile("(-?\\d[\\d,]*(?:\\.\\d+)?)([xk]?)\\s*$");
    /** The word a marker of a text follows: a version, a date and time. */
    private static final Pattern WORD_BEFORE = Pattern.compile("[\\w.:+-]+$");
    private static final Pattern FIGURE_SHAPED = Pattern.compile(
            "(?<![\\w.])(?:\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+\\.\\d+|\\d{4,}|\\d+(?=[xk]))[xk]?(?!\\w|\\.\\d)");
    private static final Pattern ANY_NUMBER = Pattern.compile("\\d");
    private static final Pattern VERSION = Pattern.compile("\\d+\\.\\d+\\.\\d+");
    private static final Pattern INLINE_CODE = Pattern.compile("`[^`]*`");
    private static final Pattern LINK_TARGET = Pattern.compile("\\]\\([^)]*\\)");
    private static final Pattern COMMENT = Pattern.compile("<!--.*?-->");

    private final JsonNode results;

    QuotedFigures(JsonNode results) {
        this.results = results;
    }

    /**
     * @param page     the page's name, for the messages
     * @param text     the page's text
     * @param complete the part of {@code text} in which every figure-shaped number must have a marker
     *                 (from, to: offsets; an empty range for none)
     * @return what is wrong, one line each, with the page's line numbers; empty when every marked
     *         figure is the file's and the complete part has none unmarked
     */
    List<String> problems(String page, String source, int[] complete) {
        List<String> problems = new ArrayList<>();
        String text = prose(source);
        StringBuilder unmarked = new StringBuilder(text);
        Matcher marker = MARKER.matcher(text);
        while (marker.find()) {
            String path = marker.group(1);
            String before = text.substring(0, marker.start());
            int start = check(page, line(text, marker.start()), path, before, problems);
            for (int i = start; i < marker.end(); i++) {
                if (unmarked.charAt(i) != '\n') {
                    unmarked.setCharAt(i, ' ');
                }
            }
        }
        unmarked(page, unmarked.toString(), line(text, complete[0]), line(text, complete[1]) - 1, problems);
        return problems;
    }

    /**
     * @return {@code source} with every marked figure set to the results file's, written as the page
     *         wrote it (its decimals, its thousands separators, its {@code x} or {@code k}): after a new
     *         run, what a writer copies over the page and then reads for what the new figures change
     *         in the words around them; a marked text (a version, the date) is the word before its
     *         marker. Markers of {@code none} and of paths the file lacks are left as they are (the
     *         check names them).
     */
    String refreshed(String source) {
        String text = prose(source);
        StringBuilder out = new StringBuilder(source);
        List<int[]> spans = new ArrayList<>();
        List<String> figures = new ArrayList<>();
        Matcher marker = MARKER.matcher(text);
        while (marker.find()) {
            JsonNode value = at(marker.group(1));
            if (value != null && value.isString()) {
                // a text of one word (a version, the date): the word right before the marker becomes
                // the file's; a longer text already there stays, any other is for the writer
                Matcher word = WORD_BEFORE.matcher(text.substring(0, marker.start()));
                if (!text.substring(0, marker.start()).endsWith(value.asString())
                        && WORD_BEFORE.matcher(value.asString()).matches() && word.find()) {
                    spans.add(new int[] {word.start(), word.end()});
                    figures.add(value.asString());
                }
                continue;
            }
            Matcher figure = FIGURE_BEFORE.matcher(text.substring(0, marker.start()));
            if (marker.group(1).equals("none") || value == null || !value.isNumber() || !figure.find()) {
                continue;
            }
            BigDecimal quoted = new BigDecimal(figure.group(1).replace(",", ""));
            BigDecimal exact = figure.group(2).equals("k") ? value.decimalValue().movePointLeft(3) : value.decimalValue();
            BigDecimal rounded = exact.setScale(Math.max(0, quoted.scale()), RoundingMode.HALF_UP);
            String written = figure.group(1).contains(",")
                    ? String.format(Locale.ROOT, "%,." + rounded.scale() + "f", rounded)
                    : rounded.toPlainString();
            spans.add(new int[] {figure.start(1), figure.end(1)});
            figures.add(written);
        }
        for (int i = spans.size() - 1; i >= 0; i--) {
            out.replace(spans.get(i)[0], spans.get(i)[1], figures.get(i));
        }
        return out.toString();
    }

    /**
     * @return {@code source} with its fenced code blocks and inline code made blanks (line breaks
     *         kept): what is shown as code, a marker's example among it, is neither a marker nor a figure
     */
    static String prose(String source) {
        StringBuilder prose = new StringBuilder(source);
        boolean fenced = false;
        int lineStart = 0;
        for (String line : source.split("\n", -1)) {
            boolean fence = line.trim().startsWith("```");
            if (fence || fenced) {
                blank(prose, lineStart, lineStart + line.length());
            } else {
                Matcher code = INLINE_CODE.matcher(line);
                while (code.find()) {
                    blank(prose, lineStart + code.start(), lineStart + code.end());
                }
            }
            if (fence) {
                fenced = !fenced;
            }
            lineStart += line.length() + 1;
        }
        return prose.toString();
    }

    private static void blank(StringBuilder text, int from, int to) {
        for (int i = from; i < to; i++) {
            text.setCharAt(i, ' ');
        }
    }

    /** @return where the marked figure starts (the marker itself when there is none), after checking it */
    private int check(String page, int line, String path, String before, List<String> problems) {
        String where = page + ":" + line + " (" + path + ")";
        Matcher figure = FIGURE_BEFORE.matcher(before);
        boolean number = figure.find();
        if (path.equals("none")) {
            if (!number) {
                problems.add(where + ": a 'none' marker follows no number");
            }
            return number ? figure.start() : before.length();
        }
        JsonNode value = at(path);
        if (value == null || value.isMissingNode()) {
            problems.add(where + ": no such figure in the results file");
            return number ? figure.start() : before.length();
        }
        if (value.isString()) {
            String expected = value.asString();
            if (!before.endsWith(expected)) {
                problems.add(where + ": the page does not end with '" + expected + "' before the marker");
                return before.length();
            }
            return before.length() - expected.length();
        }
        if (!value.isNumber()) {
            problems.add(where + ": the results file has " + value + " there, not a figure");
            return number ? figure.start() : before.length();
        }
        if (!number) {
            problems.add(where + ": no number right before the marker");
            return before.length();
        }
        BigDecimal quoted = new BigDecimal(figure.group(1).replace(",", ""));
        BigDecimal exact = value.decimalValue();
        if (figure.group(2).equals("k")) {
            exact = exact.movePointLeft(3);
        }
        BigDecimal expected = exact.setScale(Math.max(0, quoted.scale()), RoundingMode.HALF_UP);
        if (quoted.compareTo(expected) != 0) {
            problems.add(where + ": the page says " + figure.group(1) + figure.group(2) + ", the results file "
                    + value + (quoted.scale() > 0 || figure.group(2).equals("k") ? " (" + expected + figure.group(2)
                    + " as the page rounds it)" : ""));
        }
        return figure.start();
    }

    /**
     * Adds a problem for each figure-shaped number of lines {@code first} to {@code last} (1-based)
     * of {@code text}, whose code, markers and their figures are blanked.
     */
    private static void unmarked(String page, String text, int first, int last, List<String> problems) {
        String[] lines = text.split("\n", -1);
        for (int i = first - 1; i < Math.min(last, lines.length); i++) {
            String line = lines[i];
            String read = COMMENT.matcher(LINK_TARGET.matcher(line).replaceAll("]")).replaceAll(" ");
            read = VERSION.matcher(read).replaceAll(" ");
            if (isTableRow(read) && !isTableSeparator(read)) {
                boolean header = i + 1 < lines.length && isTableSeparator(lines[i + 1]);
                String[] cells = read.trim().split("\\|", -1);
                // cells[0] is what precedes the first '|' (nothing), cells[1] the first column.
                for (int c = 2; c < cells.length && !header; c++) {
                    if (ANY_NUMBER.matcher(cells[c]).find()) {
                        problems.add(page + ":" + (i + 1) + ": a number without a marker in a table cell: '"
                                + cells[c].trim() + "'");
                    }
                }
                read = cells.length > 1 ? cells[1] : "";
            }
            Matcher shaped = FIGURE_SHAPED.matcher(read);
            while (shaped.find()) {
                problems.add(page + ":" + (i + 1) + ": a figure without a marker: '" + shaped.group() + "'");
            }
        }
    }

    private static boolean isTableRow(String line) {
        return line.trim().startsWith("|");
    }

    private static boolean isTableSeparator(String line) {
        return line.trim().matches("\\|[\\s|:-]*-[\\s|:-]*");
    }

    /** @return the figure at a dotted path (a number is an index in an array: {@code loadAverageAtStart.0}), or null */
    private JsonNode at(String path) {
        JsonNode node = results;
        for (String key : path.split("\\.")) {
            if (node == null) {
                return null;
            }
            node = node.isArray() && key.matches("\\d+") ? node.get(Integer.parseInt(key)) : node.get(key);
        }
        return node;
    }

    private static int line(String text, int offset) {
        int line = 1;
        for (int i = 0; i < Math.min(offset, text.length()); i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }
}
