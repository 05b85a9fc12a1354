package io.github.redissemaphore.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every benchmark figure the README and the docs quote is the one of docs/benchmark-results.json,
 * the file of one run ({@link QuotedFigures} has the marker scheme; docs/benchmark.md explains it to
 * writers). Each marked figure on README.md and docs/*.md is checked; in the README's "How fast"
 * section and in docs/benchmark.md before its "History", a figure without a marker fails too.
 * Reads the pages relative to this module's directory (surefire's working directory), and fails
 * when they are not there.
 */
class BenchmarkDocsTest {

    private static final Path ROOT = Path.of("..");
    private static final Path RESULTS = ROOT.resolve("docs/benchmark-results.json");
    private static final Path README = ROOT.resolve("README.md");
    private static final Path BENCHMARK_PAGE = ROOT.resolve("docs/benchmark.md");
    /** Where a failing check writes each page with the results file's figures. */
    private static final Path REFRESHED = Path.of("target", "refreshed-docs");

    @Test
    void everyQuotedFigureIsTheResultsFilesAndNoneInTheBenchmarkSectionsIsUnmarked() throws IOException {
        QuotedFigures figures = new QuotedFigures(results());
        List<String> problems = new ArrayList<>();
        for (Path page : pages()) {
            String text = Files.readString(page, StandardCharsets.UTF_8);
            List<String> wrong = figures.problems(ROOT.relativize(page).toString(), text, checkedPart(page, text));
            if (!wrong.isEmpty()) {
                // After a new run: the page with the file's figures, for the writer to compare and copy over.
                Path refreshed = REFRESHED.resolve(ROOT.relativize(page));
                Files.createDirectories(refreshed.getParent());
                Files.writeString(refreshed, figures.refreshed(text), StandardCharsets.UTF_8);
                problems.addAll(wrong);
            }
        }
        assertThat(problems).as("figures of the pages against %s (each page with the file's figures is in %s:"
                + " compare it with the page, read the words around what changed, and copy it over)", RESULTS,
                REFRESHED.toAbsolutePath().normalize()).isEmpty();
    }

    @Test
    void theBenchmarkSectionsQuoteTheRun() throws IOException {
        String readme = Files.readString(README, StandardCharsets.UTF_8);
        String page = Files.readString(BENCHMARK_PAGE, StandardCharsets.UTF_8);
        int[] howFast = section(readme, "## How fast", "\n## ");
        assertThat(howFast[1]).as("README.md has a '## How fast' section").isGreaterThan(howFast[0]);
        assertThat(QuotedFigures.MARKER.matcher(readme.substring(howFast[0], howFast[1])).results().count())
                .as("markers in the README's How fast").isGreaterThanOrEqualTo(10);
        assertThat(QuotedFigures.MARKER.matcher(page).results().count()).as("markers in docs/benchmark.md")
                .isGreaterThanOrEqualTo(40);
        JsonNode run = results().get("run");
        for (String field : List.of("date", "command", "machine", "java", "redis", "redisson")) {
            assertThat(run.has(field)).as("run." + field + " in " + RESULTS).isTrue();
        }
        assertThat(run.get("command").asString()).contains("-Dbench.results=docs/benchmark-results.json");
    }

    @Test
    void aFigureChangedByHandFails() throws IOException {
        QuotedFigures figures = new QuotedFigures(JsonMapper.builder().build().readTree(
                "{\"a\": {\"pairs\": 178320, \"ratio\": 1.61, \"version\": \"4.7.0\"}}"));
        assertThat(figures.problems("p", "178,320<!-- bench: a.pairs --> 1.61x<!-- bench: a.ratio -->"
                + " 1.6x<!-- bench: a.ratio --> 178k<!-- bench: a.pairs --> Redisson 4.7.0<!-- bench: a.version -->",
                new int[] {0, 1000})).isEmpty();
        assertThat(figures.problems("p", "178,321<!-- bench: a.pairs -->", new int[] {0, 0}))
                .singleElement().asString().contains("the page says 178,321");
        assertThat(figures.problems("p", "1.62x<!-- bench: a.ratio -->", new int[] {0, 0})).hasSize(1);
        assertThat(figures.problems("p", "179k<!-- bench: a.pairs -->", new int[] {0, 0})).hasSize(1);
        assertThat(figures.problems("p", "Redisson 3.52<!-- bench: a.version -->", new int[] {0, 0})).hasSize(1);
        assertThat(figures.problems("p", "1<!-- bench: a.missing -->", new int[] {0, 0}))
                .singleElement().asString().contains("no such figure");
    }

    @Test
    void aRefreshedPageHasTheFilesFiguresWrittenAsThePageWroteThem() throws IOException {
        QuotedFigures figures = new QuotedFigures(JsonMapper.builder().build().readTree(
                "{\"a\": {\"pairs\": 181352, \"ratio\": 1.6249, \"version\": \"4.8.1\"}}"));
        String page = "178,320<!-- bench: a.pairs --> 1.61x<!-- bench: a.ratio --> 1.6x<!-- bench: a.ratio -->"
                + " 178k<!-- bench: a.pairs --> 178320<!-- bench: a.pairs --> Redisson 4.7.0<!-- bench: a.version -->"
                + " 1.5x<!-- bench: none --> `9<!-- bench: a.pairs -->`";
        String refreshed = figures.refreshed(page);
        assertThat(refreshed).isEqualTo("181,352<!-- bench: a.pairs --> 1.62x<!-- bench: a.ratio -->"
                + " 1.6x<!-- bench: a.ratio --> 181k<!-- bench: a.pairs --> 181352<!-- bench: a.pairs -->"
                + " Redisson 4.8.1<!-- bench: a.version --> 1.5x<!-- bench: none --> `9<!-- bench: a.pairs -->`");
        assertThat(figures.problems("p", refreshed, new int[] {0, 0})).isEmpty();
    }

    @Test
    void anUnmarkedFigureFailsInTheCheckedPartOnly() throws IOException {
        QuotedFigures figures = new QuotedFigures(JsonMapper.builder().build().readTree("{\"a\": 1.5}"));
        String text = "Intro 1,234 and 2.5x.\n"
                + "| contender | pairs/s |\n| --- | ---: |\n| ours 1 | 42 |\n| ours 2 | 1.5<!-- bench: a --> |\n"
                + "Target 1.5x<!-- bench: none -->, `-Dbench.rounds=3.5`, [link](x.md#1.5), Redis 7.0.15, 3 rounds.\n"
                + "```\n12,345\n```\nIt took 1.25 s.\n";
        int checked = text.indexOf("| contender");
        List<String> problems = figures.problems("p", text, new int[] {checked, text.length()});
        assertThat(problems).containsExactly("p:4: a number without a marker in a table cell: '42'",
                "p:10: a figure without a marker: '1.25'");
    }

    private static JsonNode results() throws IOException {
        assertThat(RESULTS).as("the results file, from " + Path.of("").toAbsolutePath()).isRegularFile();
        return JsonMapper.builder().build().readTree(Files.readString(RESULTS, StandardCharsets.UTF_8));
    }

    /** @return README.md and docs/*.md; fails when they are not there */
    private static List<Path> pages() throws IOException {
        assertThat(README).as("README.md, from " + Path.of("").toAbsolutePath()).isRegularFile();
        assertThat(BENCHMARK_PAGE).as("docs/benchmark.md, from " + Path.of("").toAbsolutePath()).isRegularFile();
        List<Path> pages = new ArrayList<>(List.of(README));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(page -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    /** @return the part of a page where every figure must be marked: README's How fast, benchmark.md before History */
    private static int[] checkedPart(Path page, String text) {
        if (page.equals(README)) {
            return section(text, "## How fast", "\n## ");
        }
        if (page.equals(BENCHMARK_PAGE)) {
            int history = text.indexOf("\n## History");
            return new int[] {0, history < 0 ? text.length() : history};
        }
        return new int[] {0, 0};
    }

    /** @return from the line that starts with {@code heading} to the next {@code next}, or an empty range */
    private static int[] section(String text, String heading, String next) {
        int start = text.startsWith(heading) ? 0 : text.indexOf("\n" + heading);
        if (start < 0) {
            return new int[] {0, 0};
        }
        int end = text.indexOf(next, start + 1);
        return new int[] {start, end < 0 ? text.length() : end};
    }
}
