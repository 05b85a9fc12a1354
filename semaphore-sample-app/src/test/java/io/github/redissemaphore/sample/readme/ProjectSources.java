package io.github.redissemaphore.sample.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The project the documentation describes, as the checks need it: its Maven modules (directory, artifact,
 * version, profiles) and the text of its Java sources, main and test, and of its scripts.
 */
final class ProjectSources {

    /** A Maven module: its directory relative to the root ({@code ""} for the root itself). */
    record Module(String directory, String artifactId, String version, List<String> profiles) {
    }

    private final Path root;
    private final Map<String, Module> modules = new LinkedHashMap<>();
    private final Map<Path, String> mainSources = new LinkedHashMap<>();
    private final Map<Path, String> testSources = new LinkedHashMap<>();

    ProjectSources(Path root) {
        this.root = root;
        readModule("", null);
        for (Module module : List.copyOf(modules.values())) {
            readSources(root.resolve(module.directory()));
        }
    }

    Path root() {
        return root;
    }

    /** @return the module in that directory (relative to the root), or with that artifact id ({@code :id}) */
    Optional<Module> module(String reference) {
        return modules.values().stream()
                .filter(module -> reference.startsWith(":") ? module.artifactId().equals(reference.substring(1))
                        : Path.of(module.directory()).normalize().equals(Path.of(reference).normalize()))
                .findFirst();
    }

    List<Module> modules() {
        return List.copyOf(modules.values());
    }

    /**
     * @return whether a type whose simple name matches {@code nameRegex} is declared in the test sources
     *         of {@code module} (of all modules when null)
     */
    boolean declaresTestClassMatching(String nameRegex, Module module) {
        Pattern declaration = Pattern.compile("\\b(class|record|interface|enum)\\s+" + nameRegex + "\\b");
        return testSources(module).anyMatch(source -> declaration.matcher(source).find());
    }

    /** @return whether a test source declares a method {@code void <name>(} ({@code name} a regular expression) */
    boolean declaresTestMethod(String nameRegex) {
        Pattern declaration = Pattern.compile("\\bvoid\\s+" + nameRegex + "\\s*\\(");
        return testSources(null).anyMatch(source -> declaration.matcher(source).find());
    }

    /** @return whether the main sources use this word as an identifier or in a string */
    boolean mainSourcesUseWord(String word) {
        Pattern use = Pattern.compile("\\b" + Pattern.quote(word) + "\\b");
        return mainSources.values().stream().anyMatch(source -> use.matcher(source).find());
    }

    /** @return whether this flag ({@code --demo}) occurs in a main source or a script of the root ({@code demo.sh}) */
    boolean mainSourcesOrScriptsHandle(String flag) {
        Pattern use = Pattern.compile(Pattern.quote(flag) + "(?![\\w-])");
        return Stream.concat(mainSources.values().stream(), scripts()).anyMatch(source -> use.matcher(source).find());
    }

    /**
     * @return whether some source, main or test, reads the system property {@code name}: it has the
     *         name as a string literal, or the literal of a prefix ({@code "bench."}) and, in the same
     *         file, of the rest ({@code "measures"})
     */
    boolean readsSystemProperty(String name) {
        return Stream.concat(mainSources.values().stream(), testSources.values().stream()).anyMatch(source -> {
            if (source.contains('"' + name + '"')) {
                return true;
            }
            for (int dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
                String prefix = '"' + name.substring(0, dot + 1) + '"';
                if (source.contains(prefix) && source.contains('"' + name.substring(dot + 1) + '"')) {
                    return true;
                }
            }
            return false;
        });
    }

    private Stream<String> testSources(Module module) {
        if (module == null) {
            return testSources.values().stream();
        }
        Path tests = root.resolve(module.directory()).normalize();
        return testSources.entrySet().stream()
                .filter(entry -> entry.getKey().startsWith(tests))
                .map(Map.Entry::getValue);
    }

    private Stream<String> scripts() {
        try (Stream<Path> files = Files.list(root)) {
            return files.filter(file -> file.toString().endsWith(".sh")).map(ProjectSources::read).toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void readModule(String directory, Module parent) {
        Element project = parsePom(root.resolve(directory).resolve("pom.xml")).getDocumentElement();
        String version = childText(project, "version");
        List<String> profiles = new ArrayList<>();
        NodeList ids = project.getElementsByTagName("profile");
        for (int i = 0; i < ids.getLength(); i++) {
            profiles.add(childText((Element) ids.item(i), "id"));
        }
        Module module = new Module(directory, childText(project, "artifactId"),
                version != null ? version : parent != null ? parent.version() : null, List.copyOf(profiles));
        modules.put(directory, module);
        NodeList children = project.getElementsByTagName("module");
        for (int i = 0; i < children.getLength(); i++) {
            readModule(Path.of(directory).resolve(children.item(i).getTextContent().strip()).toString(), module);
        }
    }

    private void readSources(Path moduleDirectory) {
        // Kotlin sources too: the aspect's Kotlin support is proven by Kotlin tests the docs cite; and
        // every test source root of a module, not only src/test/java (semaphore-spring-boot-common keeps
        // tests for the starters in src/test/every-starter/java and its Boot 3.5 BootLine in src/test/boot-3.5/java)
        for (String kind : List.of("main", "test")) {
            for (String language : kind.equals("main") ? List.of("java", "kotlin") : List.of("")) {
                Path sources = language.isEmpty() ? moduleDirectory.resolve("src").resolve(kind)
                        : moduleDirectory.resolve("src").resolve(kind).resolve(language);
                if (!Files.isDirectory(sources)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(sources)) {
                    Map<Path, String> texts = kind.equals("main") ? mainSources : testSources;
                    files.filter(file -> file.toString().endsWith(".java") || file.toString().endsWith(".kt"))
                            .forEach(file -> texts.put(file.normalize(), read(file)));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Document parsePom(Path pom) {
        try {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
        } catch (Exception e) {
            throw new IllegalStateException("Cannot read " + pom, e);
        }
    }

    /** @return the text of the direct child of that tag, or null */
    private static String childText(Element parent, String tag) {
        for (org.w3c.dom.Node child = parent.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof Element element && element.getTagName().equals(tag)) {
                return element.getTextContent().strip();
            }
        }
        return null;
    }
}
