package io.github.redissemaphore.sample.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.sample.readme.Page.Block;
import io.github.redissemaphore.sample.readme.Page.Mention;
import io.github.redissemaphore.sample.readme.ProjectSources.Module;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The README and the pages of {@code docs/} name nothing that does not exist: every property they
 * write is known to the configuration metadata, every command names real modules, profiles, test
 * classes, system properties and flags, every test cited as evidence exists, every project file
 * named is there, every dependency snippet names a module of this build and its version, and the
 * Java snippets name classes and members that exist ({@link JavaSnippets}). The pages are read at
 * test time, so whatever is added to them is checked too. Paths served over HTTP are checked by
 * {@link ReadmeEndpointsTest}.
 */
class ReadmeTest {

    /**
     * Property names written in prose, code spans and blocks, under the prefixes of the library, the
     * sample and the parts of Spring Boot the documentation covers. Not preceded by a word character, a
     * dot, a slash or {@code $}, so package names ({@code io.github.redissemaphore.sample.demo}) and
     * JVM options ({@code -Dspring.aot.enabled}) are not taken for properties.
     */
    private static final Pattern PROPERTY = Pattern.compile(
            "(?<![\\w./$])((?:distributed-semaphore|management|spring\\.data\\.redis|spring\\.ssl|server|sample)"
                    + "\\.[A-Za-z0-9*<>\\[\\]{}._-]*[A-Za-z0-9*>\\]}])");

    /** A test cited as evidence: a test class, a method name of four words or more, {@code ...Suffix} for several. */
    private static final Pattern TEST_CLASS = Pattern.compile("[A-Z][A-Za-z0-9]*Test");
    private static final Pattern TEST_METHOD = Pattern.compile("[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*){3,}");
    private static final Pattern TEST_METHOD_SUFFIX = Pattern.compile("\\.\\.\\.([A-Z][A-Za-z0-9]*)");

    /** A dependency on a module of this project: Maven's three elements, or Gradle's {@code group:artifact:version}. */
    private static final Pattern MAVEN_DEPENDENCY = Pattern.compile(
            "<groupId>io\\.github\\.redissemaphore</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*"
                    + "<version>([^<]+)</version>");
    private static final Pattern GRADLE_DEPENDENCY = Pattern.compile(
            "[\"']io\\.github\\.redissemaphore:([^:\"']+):([^:\"']+)[\"']");

    private final Docs docs = Docs.ofThisProject();
    private final ProjectSources project = new ProjectSources(docs.root());

    @TestFactory
    List<DynamicTest> everyPropertyIsKnownToTheConfigurationMetadata() {
        KnownProperties known = KnownProperties.onTheClassPath();
        List<DynamicTest> checks = new ArrayList<>();
        for (Page page : docs.pages()) {
            checks.addAll(propertyChecks(page, known));
        }
        return checks;
    }

    private static List<DynamicTest> propertyChecks(Page page, KnownProperties known) {
        Set<Mention> names = new LinkedHashSet<>(page.find(PROPERTY, 1).stream()
                .map(found -> new Mention(withoutUnbalancedEnd(found.text()), found.line(), page)).toList());
        List<DynamicTest> checks = new ArrayList<>();
        for (Block block : page.blocks()) {
            List<Mention> keys = new ArrayList<>();
            switch (block.info()) {
                case "yaml", "yml" -> checks.addAll(yamlKeys(block, keys));
                case "properties" -> propertiesKeys(block, keys);
                default -> { }
            }
            // a block is configuration when some key is under a known root; not, say, Prometheus alert rules
            if (keys.stream().anyMatch(key -> known.knowsRootOf(key.text()))) {
                names.addAll(keys);
            }
        }
        for (Mention name : names) {
            checks.add(ReadmeCheck.named(name.where() + ": " + name.text(),
                    () -> known.problemWith(name.text()).ifPresent(Assertions::fail)));
        }
        return checks;
    }

    @TestFactory
    List<DynamicTest> everyCommandNamesWhatExists() {
        KnownProperties known = KnownProperties.onTheClassPath();
        return docs.pages().stream().flatMap(page -> ReadmeCommands.checks(page, project, known).stream()).toList();
    }

    @TestFactory
    List<DynamicTest> everyJavaSnippetNamesWhatExists() {
        return JavaSnippets.checks(docs);
    }

    @TestFactory
    Stream<DynamicTest> everyDependencySnippetNamesAModuleAndItsVersion() {
        return docs.pages().stream().flatMap(page -> Stream.concat(page.find(MAVEN_DEPENDENCY, 0).stream(),
                page.find(GRADLE_DEPENDENCY, 0).stream())).map(found -> {
                    Matcher dependency = MAVEN_DEPENDENCY.matcher(found.text());
                    if (!dependency.matches()) {
                        dependency = GRADLE_DEPENDENCY.matcher(found.text());
                        assertThat(dependency.matches()).isTrue();
                    }
                    String artifactId = dependency.group(1);
                    String version = dependency.group(2);
                    return ReadmeCheck.named(found.where() + ": " + artifactId + " " + version, () -> {
                        Optional<Module> module = project.module(":" + artifactId);
                        assertThat(module).as("a module with the artifact id %s", artifactId).isPresent();
                        assertThat(version).as("the version of %s", artifactId).isEqualTo(module.get().version());
                    });
                });
    }

    @TestFactory
    Stream<DynamicTest> everyTestCitedAsEvidenceExists() {
        return docs.pages().stream().flatMap(page -> page.spans().stream().distinct()).flatMap(span -> {
            String text = span.text();
            String name = span.where() + ": " + text;
            if (TEST_CLASS.matcher(text).matches()) {
                return Stream.of(ReadmeCheck.named(name, () -> assertThat(project.declaresTestClassMatching(text, null))
                        .as("a test class %s", text).isTrue()));
            }
            var suffix = TEST_METHOD_SUFFIX.matcher(text);
            if (suffix.matches()) {
                return Stream.of(ReadmeCheck.named(name, () -> assertThat(
                        project.declaresTestMethod("\\w+" + suffix.group(1)))
                        .as("a test method whose name ends in %s", suffix.group(1)).isTrue()));
            }
            if (TEST_METHOD.matcher(text).matches()) {
                // a long lowerCamel name is a test the text cites, or a name of the main sources (a bean, a method)
                return Stream.of(ReadmeCheck.named(name, () -> assertThat(
                        project.declaresTestMethod(text) || project.mainSourcesUseWord(text))
                        .as("a test method %s (or a name in the main sources)", text).isTrue()));
            }
            return Stream.empty();
        });
    }

    /** Paths of the project in code spans, such as {@code semaphore-sample-app/src/main/resources/application.yml}. */
    @TestFactory
    Stream<DynamicTest> everyProjectFileNamedExists() {
        return docs.pages().stream().flatMap(page -> page.spans().stream().distinct())
                .filter(span -> span.text().matches("[\\w.*-]+(/[\\w.*-]*)+") && !span.text().contains("target/"))
                .filter(span -> Files.exists(docs.root().resolve(span.text().substring(0, span.text().indexOf('/')))))
                .map(span -> ReadmeCheck.named(span.where() + ": " + span.text(),
                        () -> assertThat(existsMatching(span.text())).as("%s in the project", span.text()).isTrue()));
    }

    private static List<DynamicTest> yamlKeys(Block block, List<Mention> names) {
        try {
            YamlBlock.entries(block).forEach(entry -> names.add(new Mention(entry.name(), entry.line(), block.page())));
            return List.of();
        } catch (RuntimeException e) {
            return List.of(ReadmeCheck.named(block.where() + ": the YAML block parses", () -> {
                throw e;
            }));
        }
    }

    private static void propertiesKeys(Block block, List<Mention> names) {
        for (int i = 0; i < block.lines().size(); i++) {
            String line = block.lines().get(i).strip();
            if (!line.isEmpty() && !line.startsWith("#") && !line.startsWith("!")) {
                names.add(new Mention(line.split("\\s*[=:]", 2)[0], block.firstLine() + i, block.page()));
            }
        }
    }

    /** Drops closing brackets the name did not open: {@code ${spring.application.name}} gives the name. */
    private static String withoutUnbalancedEnd(String name) {
        String trimmed = name;
        while (trimmed.endsWith("]") && count(trimmed, '[') < count(trimmed, ']')
                || trimmed.endsWith("}") && count(trimmed, '{') < count(trimmed, '}')) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed;
    }

    private static long count(String text, char c) {
        return text.chars().filter(x -> x == c).count();
    }

    private boolean existsMatching(String relative) {
        if (!relative.contains("*")) {
            return Files.exists(docs.root().resolve(relative));
        }
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + relative);
        try (Stream<Path> files = Files.walk(docs.root())) {
            return files.map(docs.root()::relativize).anyMatch(matcher::matches);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
