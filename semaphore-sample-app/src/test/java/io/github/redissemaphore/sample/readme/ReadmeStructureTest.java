package io.github.redissemaphore.sample.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.sample.readme.Page.Mention;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The README is a landing page that reads in the order people read it (what it is and a picture;
 * the dependency; the configuration; the annotation; plain Java; the guarantees; the demo; the two
 * commands; the documentation), short enough to read at once; everything else is in the pages of
 * {@code docs/}, each reachable from the README, none repeating another. Every relative link of
 * every page leads to a file and, when it names one, a heading of it; every table has its header
 * row, as GitHub renders a table only below one.
 */
class ReadmeStructureTest {

    private static final List<String> SECTIONS = List.of("Add the dependency", "Configure it", "Guard a method",
            "Limits per key under a shared cap", "Plain Java", "Guarantees", "How fast", "See it work", "Two commands", "Documentation");
    /** A landing page, not a manual: about the length of the READMEs of the libraries it sits beside. */
    private static final int MOST_README_LINES = 300;
    /** A line of prose this long that two pages share is text written twice. */
    private static final int REPEATED_LINE_LENGTH = 60;
    /** {@code [text](target)} and {@code ![alt](target)}: the target, up to a blank or the closing parenthesis. */
    private static final Pattern LINK = Pattern.compile("]\\(([^)\\s]+)\\)");
    private static final Pattern EXTERNAL = Pattern.compile("^[a-z][a-z0-9+.-]*:", Pattern.CASE_INSENSITIVE);
    private static final Pattern DELIMITER_ROW = Pattern.compile("^\\|( *:?-{3,}:? *\\|)+$");

    private final Docs docs = Docs.ofThisProject();

    @Test
    void theReadmeIsALandingPageInTheOrderPeopleReadIt() {
        Page readme = docs.readme();
        List<String> sections = readme.headings().stream().map(Mention::text).filter(text -> text.startsWith("## "))
                .map(text -> text.substring(3)).toList();
        assertThat(sections).containsExactlyElementsOf(SECTIONS);
        List<String> beforeTheFirstSection = readme.proseLines().stream()
                .takeWhile(line -> !line.text().startsWith("## ")).map(Mention::text).toList();
        assertThat(beforeTheFirstSection).as("what it is, with one picture, before the dependency")
                .anyMatch(line -> line.startsWith("!["));
        assertThat(readme.text().lines().count()).as("lines of the README")
                .isLessThanOrEqualTo(MOST_README_LINES);
    }

    @Test
    void everyPageOfTheDocsIsReachableFromTheReadme() {
        Set<Path> reached = new LinkedHashSet<>();
        Deque<Page> next = new ArrayDeque<>(List.of(docs.readme()));
        Map<Path, Page> byFile = new LinkedHashMap<>();
        docs.linkedPages().forEach(page -> byFile.put(page.file().normalize(), page));
        while (!next.isEmpty()) {
            Page page = next.pop();
            if (!reached.add(page.file().normalize())) {
                continue;
            }
            for (Mention link : links(page)) {
                target(page, link.text()).map(byFile::get).ifPresent(next::add);
            }
        }
        assertThat(docs.docsPages()).as("pages of docs/").isNotEmpty();
        assertThat(docs.docsPages()).as("pages of docs/ that a reader of the README reaches by its links")
                .allSatisfy(page -> assertThat(reached).as(page.name()).contains(page.file().normalize()));
    }

    @TestFactory
    Stream<DynamicTest> everyRelativeLinkLeadsToAFileAndItsHeading() {
        return docs.linkedPages().stream().flatMap(page -> links(page).stream())
                .filter(link -> !EXTERNAL.matcher(link.text()).find())
                .map(link -> ReadmeCheck.named(link.where() + ": " + link.text(), () -> {
                    Optional<Path> file = target(link.page(), link.text());
                    assertThat(file).as("a file of the project").isPresent();
                    assertThat(file.get()).as("the file %s links to", link.text()).exists();
                    int hash = link.text().indexOf('#');
                    if (hash >= 0) {
                        String anchor = link.text().substring(hash + 1);
                        assertThat(file.get().toString()).as("a page with headings, for #%s", anchor).endsWith(".md");
                        Page target = file.get().equals(link.page().file().normalize()) ? link.page()
                                : new Page(file.get(), docs.root().relativize(file.get()).toString());
                        assertThat(target.anchors()).as("the anchors of the headings of %s", target.name())
                                .contains(anchor);
                    }
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyPageHasOneTitle() {
        return docs.pages().stream().map(page -> ReadmeCheck.named(page.name() + ": its title", () -> {
            assertThat(page.text()).as("the first line of %s", page.name()).startsWith("# ");
            assertThat(page.headings()).as("level-1 headings of %s", page.name())
                    .filteredOn(heading -> heading.text().startsWith("# ")).hasSize(1);
        }));
    }

    @TestFactory
    Stream<DynamicTest> noPageRepeatsAnother() {
        Map<String, List<Mention>> pagesOfLine = new LinkedHashMap<>();
        for (Page page : docs.linkedPages()) {
            Set<String> once = new LinkedHashSet<>();
            for (Mention line : page.proseLines()) {
                String text = line.text().strip();
                if (text.length() >= REPEATED_LINE_LENGTH && !DELIMITER_ROW.matcher(text).matches() && once.add(text)) {
                    pagesOfLine.computeIfAbsent(text, key -> new ArrayList<>()).add(line);
                }
            }
        }
        return pagesOfLine.entrySet().stream().filter(entry -> entry.getValue().size() > 1)
                .map(entry -> ReadmeCheck.named(entry.getValue().get(0).where() + ": a line written twice", () ->
                        assertThat(entry.getValue().stream().map(Mention::where).toList())
                                .as("pages that have the line \"%s\"", entry.getKey()).hasSize(1)));
    }

    @TestFactory
    Stream<DynamicTest> everyTableHasAHeaderRow() {
        List<DynamicTest> checks = new ArrayList<>();
        for (Page page : docs.linkedPages()) {
            List<Mention> lines = page.proseLines();
            for (int i = 0; i < lines.size(); i++) {
                boolean row = lines.get(i).text().startsWith("|");
                boolean starts = row && (i == 0 || !lines.get(i - 1).text().startsWith("|"));
                if (starts) {
                    Mention first = lines.get(i);
                    String second = i + 1 < lines.size() ? lines.get(i + 1).text() : "";
                    checks.add(ReadmeCheck.named(first.where() + ": a table", () -> {
                        assertThat(second).as("the row below the table's first row, line %d", first.line() + 1)
                                .matches(DELIMITER_ROW);
                        assertThat(cells(second)).as("the columns of the header and of the delimiter row")
                                .isEqualTo(cells(first.text()));
                    }));
                }
            }
        }
        return checks.stream();
    }

    /** @return the targets of the links in the prose of {@code page} (not in code blocks or spans) */
    private static List<Mention> links(Page page) {
        List<Mention> links = new ArrayList<>();
        for (Mention line : page.proseLines()) {
            Matcher link = LINK.matcher(line.text().replaceAll("`[^`]*`", "``"));
            while (link.find()) {
                links.add(new Mention(link.group(1), line.line(), page));
            }
        }
        return links;
    }

    /** @return the project file a relative link of {@code page} leads to (the page itself for {@code #anchor}) */
    private Optional<Path> target(Page page, String link) {
        if (EXTERNAL.matcher(link).find()) {
            return Optional.empty();
        }
        String path = link.replaceFirst("#.*", "");
        Path file = (path.isEmpty() ? page.file() : page.file().getParent().resolve(path)).normalize();
        return file.startsWith(docs.root().normalize()) ? Optional.of(file) : Optional.empty();
    }

    /** Cells of a row, escaped pipes and pipes inside code spans not counted as separators. */
    private static int cells(String row) {
        String plain = row.replaceAll("`[^`]*`", "``").replace("\\|", "");
        return (int) plain.chars().filter(c -> c == '|').count() - 1;
    }
}
