package io.github.redissemaphore.sample.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.sample.readme.ProjectSources.Module;
import io.github.redissemaphore.sample.readme.Page.Mention;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.function.Executable;

/**
 * The checks of the commands a page shows ({@code ./mvnw ...}, {@code ./demo.sh ...},
 * {@code java -jar ...}): one dynamic test per module, profile, test class, system property, flag
 * and jar a command names, each named after the page and line and what it checks.
 */
final class ReadmeCommands {

    /** A command starts at one of these; it ends at the end of the span or line, or at {@code ) ; & `}. */
    private static final Pattern COMMAND = Pattern.compile("(?<![\\w/.])(\\./mvnw|\\./demo\\.sh|java)\\s[^);&`]*");

    /** A system property given on its own in a code span; a wildcard ({@code -Dbench.*}) names no property. */
    private static final Pattern SYSTEM_PROPERTY_OPTION = Pattern.compile("-D([\\w.-]+)(=\\S*)?");

    /** System properties Maven and Surefire read themselves, not our sources. */
    private static final List<String> MAVEN_PROPERTIES = List.of("test", "skipTests", "skipITs", "forkCount");
    private static final List<String> MAVEN_PROPERTY_PREFIXES = List.of("maven.", "surefire.", "failsafe.");

    private final ProjectSources project;
    private final KnownProperties properties;
    private final List<DynamicTest> checks = new ArrayList<>();

    private ReadmeCommands(ProjectSources project, KnownProperties properties) {
        this.project = project;
        this.properties = properties;
    }

    static List<DynamicTest> checks(Page page, ProjectSources project, KnownProperties properties) {
        ReadmeCommands commands = new ReadmeCommands(project, properties);
        List<String> seen = new ArrayList<>();
        for (Mention fragment : page.codeFragments()) {
            Matcher command = COMMAND.matcher(fragment.text());
            while (command.find()) {
                String line = command.group().strip();
                if (!seen.contains(fragment.line() + line)) {
                    seen.add(fragment.line() + line);
                    commands.check(fragment, ShellWords.split(line).command());
                }
            }
        }
        for (Mention span : page.spans()) {
            Matcher option = SYSTEM_PROPERTY_OPTION.matcher(span.text());
            if (option.matches()) { // e.g. "-Dbench.measures=throughput,handoff runs only those"
                commands.checkSystemProperty(span.where() + ": ", option.group(1));
            }
        }
        return commands.checks;
    }

    private void check(Mention fragment, List<String> words) {
        String prefix = fragment.where() + ": " + words.get(0) + " ";
        switch (words.get(0)) {
            case "./mvnw" -> checkMaven(prefix, words.subList(1, words.size()));
            case "./demo.sh" -> checkArguments(prefix, words.subList(1, words.size()));
            default -> checkJava(prefix, words.subList(1, words.size()));
        }
    }

    private void checkMaven(String prefix, List<String> arguments) {
        List<Module> selected = new ArrayList<>();
        List<String> testPatterns = new ArrayList<>();
        for (int i = 0; i < arguments.size(); i++) {
            String argument = arguments.get(i);
            String value = i + 1 < arguments.size() ? arguments.get(i + 1) : "";
            switch (argument) {
                case "-pl", "--projects" -> {
                    i++;
                    for (String reference : value.split(",")) {
                        String module = reference.replaceFirst("^[!?]", "");
                        Optional<Module> found = project.module(module);
                        found.ifPresent(selected::add);
                        add(prefix + "-pl " + module, () -> assertThat(found)
                                .as("module %s of -pl (modules: %s)", module,
                                        project.modules().stream().map(Module::directory).toList()).isPresent());
                    }
                }
                case "-f", "--file" -> {
                    i++;
                    add(prefix + "-f " + value,
                            () -> assertThat(project.root().resolve(value)).as("-f %s", value).exists());
                }
                case "-P", "--activate-profiles" -> {
                    i++;
                    checkProfiles(prefix, value);
                }
                default -> {
                    if (argument.startsWith("-P")) {
                        checkProfiles(prefix, argument.substring(2));
                    } else if (argument.startsWith("-D")) {
                        String property = argument.length() > 2 ? argument.substring(2) : arguments.get(++i);
                        String name = property.split("=", 2)[0];
                        if (name.equals("test")) {
                            testPatterns.addAll(Arrays.asList(property.split("=", 2)[1].split(",")));
                        } else {
                            checkSystemProperty(prefix, name);
                        }
                    }
                }
            }
        }
        for (String pattern : testPatterns) {
            checkTestClass(prefix, pattern, selected);
        }
    }

    private void checkProfiles(String prefix, String profiles) {
        for (String reference : profiles.split(",")) {
            String profile = reference.replaceFirst("^[!?]", "");
            add(prefix + "-P" + profile, () -> assertThat(project.modules())
                    .as("a module's pom with <profile><id>%s</id>", profile)
                    .anyMatch(module -> module.profiles().contains(profile)));
        }
    }

    private void checkSystemProperty(String prefix, String name) {
        if (MAVEN_PROPERTIES.contains(name) || MAVEN_PROPERTY_PREFIXES.stream().anyMatch(name::startsWith)) {
            return;
        }
        add(prefix + "-D" + name, () -> assertThat(project.readsSystemProperty(name))
                .as("a source reads the system property %s (its name as a string literal)", name).isTrue());
    }

    /** {@code -Dtest=ModelBasedTest}, {@code -Dtest=Chaos*}, {@code -Dtest=ChaosTest#run}: the test class. */
    private void checkTestClass(String prefix, String pattern, List<Module> selected) {
        String className = pattern.replaceFirst("#.*", "").replaceFirst(".*[./]", "");
        String regex = className.replace("*", "\\w*");
        add(prefix + "-Dtest=" + pattern, () -> assertThat(selected.isEmpty()
                ? project.declaresTestClassMatching(regex, null)
                : selected.stream().anyMatch(module -> project.declaresTestClassMatching(regex, module)))
                .as("a test class %s in the test sources of %s", className,
                        selected.isEmpty() ? "the project" : selected.stream().map(Module::directory).toList())
                .isTrue());
    }

    /** Arguments of the demo or of the sample's jar: Spring properties, or flags the sources handle. */
    private void checkArguments(String prefix, List<String> arguments) {
        for (String argument : arguments) {
            if (!argument.startsWith("-")) {
                continue;
            }
            String flag = argument.split("=", 2)[0];
            String name = flag.replaceFirst("^--?", "");
            add(prefix + flag, () -> {
                Optional<String> notAProperty = properties.problemWith(name);
                assertThat(notAProperty.isEmpty() || project.mainSourcesOrScriptsHandle(flag))
                        .as("%s is neither a known property (%s) nor a flag the sample's sources or scripts handle",
                                flag, notAProperty.orElse(""))
                        .isTrue();
            });
        }
    }

    /** {@code java [options] -jar <module>/target/<artifactId>-<version>.jar [arguments]}. */
    private void checkJava(String prefix, List<String> arguments) {
        int jar = arguments.indexOf("-jar");
        if (jar < 0 || jar + 1 >= arguments.size()) {
            return;
        }
        String path = arguments.get(jar + 1);
        if (!path.equals("...")) {
            add(prefix + "-jar " + path, () -> {
                Path jarPath = Path.of(path);
                assertThat(jarPath.getNameCount()).as("%s: <module>/target/<artifactId>-<version>.jar", path)
                        .isGreaterThan(2);
                Optional<Module> module = project.module(jarPath.getParent().getParent().toString());
                assertThat(module).as("the module of %s", path).isPresent();
                String expected = module.get().artifactId() + "-" + module.get().version() + ".jar";
                assertThat(expected).as("%s is the jar of module %s", path, module.get().directory())
                        .matches(Pattern.quote(jarPath.getFileName().toString()).replace("*", "\\E.*\\Q"));
                assertThat(jarPath.getParent().getFileName()).as("%s is in target/", path).hasToString("target");
            });
        }
        checkArguments(prefix, arguments.subList(jar + 2, arguments.size()));
    }

    private void add(String name, Executable check) {
        checks.add(ReadmeCheck.named(name, check));
    }
}
