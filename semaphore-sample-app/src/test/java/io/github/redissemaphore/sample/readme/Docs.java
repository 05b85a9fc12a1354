package io.github.redissemaphore.sample.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The project's documentation as the checks read it: the README, the landing page, and the pages
 * of {@code docs/} that hold the reference, each a {@link Page}. The checks of what the text names
 * (properties, commands, tests, endpoints...) run over {@link #pages()}, so text that moves from
 * one page to another stays checked; the other Markdown files of the root (CONTRIBUTING.md, ...)
 * are read for their links only ({@link #linkedPages()}).
 */
final class Docs {

    private final Path root;
    private final Page readme;
    private final List<Page> docs;
    private final List<Page> others;

    private Docs(Path root) {
        this.root = root;
        this.readme = new Page(root.resolve("README.md"), "README.md");
        this.docs = markdownIn(root.resolve("docs"), "docs/");
        this.others = markdownIn(root, "").stream().filter(page -> !page.name().equals("README.md")).toList();
    }

    /**
     * Finds the documentation of the project this test runs in: the first directory, from the
     * working directory (Surefire's is the module's) upwards, with both a {@code README.md} and a
     * {@code pom.xml}.
     */
    static Docs ofThisProject() {
        Path dir = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            if (Files.isRegularFile(candidate.resolve("README.md"))
                    && Files.isRegularFile(candidate.resolve("pom.xml"))) {
                return new Docs(candidate);
            }
        }
        throw new IllegalStateException("No README.md next to a pom.xml in " + dir + " or above it");
    }

    /** @return the project's root, where the README is */
    Path root() {
        return root;
    }

    Page readme() {
        return readme;
    }

    /** @return the pages of {@code docs/}, by name */
    List<Page> docsPages() {
        return docs;
    }

    /** @return the README and every page of {@code docs/}: the text every check reads */
    List<Page> pages() {
        List<Page> pages = new ArrayList<>(List.of(readme));
        pages.addAll(docs);
        return pages;
    }

    /** @return {@link #pages()} and the other Markdown files of the root, whose links are checked too */
    List<Page> linkedPages() {
        List<Page> pages = pages();
        pages.addAll(others);
        return pages;
    }

    private static List<Page> markdownIn(Path dir, String prefix) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".md") && Files.isRegularFile(file))
                    .sorted()
                    .map(file -> new Page(file, prefix + file.getFileName()))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
