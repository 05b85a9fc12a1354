package io.github.redissemaphore.sample.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.sample.readme.Readme.Mention;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The README reads in the order people read it (what it is and a picture; quick start; using it;
 * the sample; operating it; the reference; how it works; guarantees; troubleshooting; benchmark;
 * tests), every link inside it leads to a heading, and every table has its header row, as
 * GitHub renders a table only below one.
 */
class ReadmeStructureTest {

    private static final List<String> SECTIONS = List.of("Quick start", "Use it in your application",
            "The sample service", "Operating it", "Reference", "How it works", "Guarantees and limits",
            "Troubleshooting", "Benchmark", "Tests");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6}) (.+)$");
    private static final Pattern LINK_WITHIN = Pattern.compile("]\\(#([^)]+)\\)");
    private static final Pattern DELIMITER_ROW = Pattern.compile("^\\|( *:?-{3,}:? *\\|)+$");

    private final Readme readme = Readme.ofThisProject();

    @Test
    void theSectionsComeInTheOrderPeopleReadThem() {
        List<String> sections = headings().stream().filter(heading -> heading.text().startsWith("## "))
                .map(heading -> heading.text().substring(3)).toList();
        assertThat(sections).containsExactlyElementsOf(SECTIONS);
        List<String> beforeTheFirstSection = readme.proseLines().stream()
                .takeWhile(line -> !line.text().startsWith("## ")).map(Mention::text).toList();
        assertThat(beforeTheFirstSection).as("what it is, with one picture, before the quick start")
                .anyMatch(line -> line.startsWith("!["));
    }

    @TestFactory
    Stream<DynamicTest> everyLinkWithinTheReadmeLeadsToAHeading() {
        Set<String> anchors = headings().stream().map(heading -> anchor(heading.text())).collect(Collectors.toSet());
        return readme.proseLines().stream().flatMap(line -> {
            Matcher link = LINK_WITHIN.matcher(line.text());
            List<DynamicTest> checks = new ArrayList<>();
            while (link.find()) {
                String target = link.group(1);
                checks.add(ReadmeCheck.named("README line " + line.line() + ": #" + target,
                        () -> assertThat(anchors).as("the anchors of the README's headings").contains(target)));
            }
            return checks.stream();
        });
    }

    @TestFactory
    Stream<DynamicTest> everyTableHasAHeaderRow() {
        List<Mention> lines = readme.proseLines();
        List<DynamicTest> checks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            boolean row = lines.get(i).text().startsWith("|");
            boolean starts = row && (i == 0 || !lines.get(i - 1).text().startsWith("|"));
            if (starts) {
                Mention first = lines.get(i);
                String second = i + 1 < lines.size() ? lines.get(i + 1).text() : "";
                checks.add(ReadmeCheck.named("README line " + first.line() + ": a table", () -> {
                    assertThat(second).as("the row below the table's first row, line %d", first.line() + 1)
                            .matches(DELIMITER_ROW);
                    assertThat(cells(second)).as("the columns of the header and of the delimiter row")
                            .isEqualTo(cells(first.text()));
                }));
            }
        }
        return checks.stream();
    }

    private List<Mention> headings() {
        return readme.proseLines().stream().filter(line -> HEADING.matcher(line.text()).matches()).toList();
    }

    /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
    private static String anchor(String heading) {
        Matcher matched = HEADING.matcher(heading);
        String text = matched.matches() ? matched.group(2) : heading;
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }

    /** Cells of a row, escaped pipes and pipes inside code spans not counted as separators. */
    private static int cells(String row) {
        String plain = row.replaceAll("`[^`]*`", "``").replace("\\|", "");
        return (int) plain.chars().filter(c -> c == '|').count() - 1;
    }
}
