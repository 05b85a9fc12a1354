package io.github.redissemaphore.sample.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.sample.readme.Page.Block;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
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
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.util.ClassUtils;

/**
 * The checks of the Java (and Kotlin) code blocks of the documentation: every import names a class
 * that exists, every member of the library's public types that a snippet uses exists
 * ({@code SemaphoreSettings.DEFAULTS}, {@code SemaphoreRegistry.builder}, {@code permit.fencingToken()}
 * on a variable declared as a {@code Permit}, the attributes of {@code @DistributedSemaphore}), and,
 * in the README, whose snippets people copy, every snippet imports the library types it uses.
 */
final class JavaSnippets {

    /** The packages of the library's public API: the annotation, and everything else. */
    private static final List<String> API_PACKAGES = List.of("io.github.redissemaphore.annotation",
            "io.github.redissemaphore.core");
    private static final String ANNOTATION = "DistributedSemaphore";
    private static final Pattern IMPORT =
            Pattern.compile("^import\\s+(static\\s+)?([\\w.]+?)(\\.\\*)?\\s*;", Pattern.MULTILINE);
    private static final Pattern ANNOTATION_USE = Pattern.compile("@" + ANNOTATION + "\\(([^)]*)\\)");
    private static final Pattern ATTRIBUTE = Pattern.compile("(\\w+)\\s*=");
    private static final Pattern COMMENT_OR_STRING = Pattern.compile("//[^\\n]*|/\\*.*?\\*/|\"(?:[^\"\\\\]|\\\\.)*\"",
            Pattern.DOTALL);

    /** Simple name -> the public type of the library's API. */
    private final Map<String, Class<?>> apiTypes = new LinkedHashMap<>();
    private final List<DynamicTest> checks = new ArrayList<>();

    private JavaSnippets() {
        PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
        for (String pkg : API_PACKAGES) {
            try {
                for (Resource resource : resolver.getResources("classpath*:" + pkg.replace('.', '/') + "/*.class")) {
                    String file = String.valueOf(resource.getFilename());
                    if (!file.contains("$") && !file.equals("package-info.class")) {
                        Class<?> type = load(pkg + "." + file.substring(0, file.length() - ".class".length()))
                                .orElseThrow();
                        if (Modifier.isPublic(type.getModifiers())) {
                            apiTypes.put(type.getSimpleName(), type);
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (!apiTypes.containsKey(ANNOTATION) || !apiTypes.containsKey("SemaphoreRegistry")) {
            throw new IllegalStateException("The library's API is not on the class path: " + apiTypes.keySet());
        }
    }

    static List<DynamicTest> checks(Docs docs) {
        JavaSnippets snippets = new JavaSnippets();
        for (Page page : docs.pages()) {
            for (Block block : page.blocks()) {
                if (block.info().equals("java") || block.info().equals("kotlin")) {
                    snippets.checkImports(block);
                    snippets.checkMembers(block);
                    if (page == docs.readme() && block.info().equals("java")) {
                        snippets.checkImportsOfTheApi(block);
                    }
                }
            }
        }
        return snippets.checks;
    }

    /** Imports of the library, and of any package on the class path, name classes that exist. */
    private void checkImports(Block block) {
        Matcher imported = IMPORT.matcher(block.text());
        while (imported.find()) {
            String name = imported.group(2);
            boolean isStatic = imported.group(1) != null;
            boolean wildcard = imported.group(3) != null;
            String owner = isStatic && !wildcard ? name.substring(0, name.lastIndexOf('.')) : name;
            String pkg = wildcard && !isStatic ? name : packageOf(owner);
            if (!pkg.startsWith("io.github.redissemaphore") && !onTheClassPath(pkg)) {
                continue; // a library the sample does not have (RxJava, say): nothing to check it against
            }
            add(block.where() + ": import " + name + (wildcard ? ".*" : ""), () -> {
                if (wildcard && !isStatic) {
                    assertThat(onTheClassPath(name)).as("package %s", name).isTrue();
                    return;
                }
                Optional<Class<?>> type = load(owner);
                assertThat(type).as("a class %s", owner).isPresent();
                if (isStatic && !wildcard) {
                    assertThat(hasMember(type.get(), name.substring(name.lastIndexOf('.') + 1)))
                            .as("a static member %s", name).isTrue();
                }
            });
        }
    }

    /** {@code Type.member} of the library's types, and the attributes given to the annotation, exist. */
    private void checkMembers(Block block) {
        String code = COMMENT_OR_STRING.matcher(withoutImports(block.text())).replaceAll(match ->
                match.group().startsWith("\"") ? "\"\"" : "");
        Set<String> seen = new LinkedHashSet<>();
        for (Map.Entry<String, Class<?>> api : apiTypes.entrySet()) {
            Matcher member = Pattern.compile("(?<![\\w.])" + api.getKey() + "\\.(\\w+)").matcher(code);
            while (member.find()) {
                String memberName = member.group(1);
                if (seen.add(api.getKey() + "." + memberName)) {
                    add(block.where() + ": " + api.getKey() + "." + memberName, () ->
                            assertThat(hasMember(api.getValue(), memberName))
                                    .as("%s has a public member %s", api.getValue().getName(), memberName).isTrue());
                }
            }
        }
        for (Map.Entry<String, Class<?>> api : apiTypes.entrySet()) {
            // a variable, field, parameter or resource declared with the type: Permit permit = ..., (Permit p)
            Matcher declared = Pattern.compile("(?<![\\w.<])" + api.getKey() + "\\s+(\\w+)\\s*[=;,)]")
                    .matcher(code);
            while (declared.find()) {
                String variable = declared.group(1);
                Matcher call = Pattern.compile("(?<![\\w.])" + variable + "\\.(\\w+)\\(").matcher(code);
                while (call.find()) {
                    String method = call.group(1);
                    if (seen.add(api.getKey() + " " + variable + "." + method)) {
                        add(block.where() + ": " + variable + "." + method + "() of a " + api.getKey(), () ->
                                assertThat(hasMember(api.getValue(), method))
                                        .as("%s has a method %s", api.getValue().getName(), method).isTrue());
                    }
                }
            }
        }
        Matcher use = ANNOTATION_USE.matcher(COMMENT_OR_STRING.matcher(block.text()).replaceAll(match ->
                match.group().startsWith("\"") ? "\"\"" : ""));
        while (use.find()) {
            Matcher attribute = ATTRIBUTE.matcher(use.group(1));
            while (attribute.find()) {
                String name = attribute.group(1);
                if (seen.add("@" + name)) {
                    add(block.where() + ": @" + ANNOTATION + "(" + name + " = ...)", () ->
                            assertThat(hasMember(apiTypes.get(ANNOTATION), name))
                                    .as("an attribute %s of @%s", name, ANNOTATION).isTrue());
                }
            }
        }
    }

    /** A snippet of the README compiles as far as names go: every library type it uses is imported. */
    private void checkImportsOfTheApi(Block block) {
        Set<String> imported = new LinkedHashSet<>();
        Set<String> wildcards = new LinkedHashSet<>();
        Matcher found = IMPORT.matcher(block.text());
        while (found.find()) {
            if (found.group(1) == null) {
                (found.group(3) != null ? wildcards : imported).add(found.group(2));
            }
        }
        String code = COMMENT_OR_STRING.matcher(withoutImports(block.text())).replaceAll("");
        apiTypes.forEach((simpleName, type) -> {
            if (Pattern.compile("(?<![\\w.])" + simpleName + "\\b").matcher(code).find()) {
                add(block.where() + ": imports " + simpleName, () -> assertThat(
                        imported.contains(type.getName()) || wildcards.contains(type.getPackageName()))
                        .as("the snippet uses %s, so it imports %s (its imports: %s)", simpleName, type.getName(),
                                imported).isTrue());
            }
        });
    }

    private static String withoutImports(String code) {
        return IMPORT.matcher(code).replaceAll("");
    }

    private static boolean hasMember(Class<?> type, String name) {
        return name.equals("class") // a class literal
                || Stream.of(type.getMethods()).anyMatch(method -> method.getName().equals(name))
                || Stream.of(type.getFields()).anyMatch(field -> field.getName().equals(name))
                || Arrays.stream(type.getClasses()).anyMatch(nested -> nested.getSimpleName().equals(name));
    }

    /** @return the package of a class name: the part before its first element in upper case */
    private static String packageOf(String className) {
        String[] parts = className.split("\\.");
        StringBuilder pkg = new StringBuilder();
        for (String part : parts) {
            if (!part.isEmpty() && Character.isUpperCase(part.charAt(0))) {
                break;
            }
            pkg.append(pkg.length() == 0 ? "" : ".").append(part);
        }
        return pkg.toString();
    }

    private static boolean onTheClassPath(String pkg) {
        return JavaSnippets.class.getClassLoader().getResource(pkg.replace('.', '/')) != null;
    }

    /** Loads a class by its canonical name, nested classes included ({@code a.b.Outer.Inner}). */
    private static Optional<Class<?>> load(String canonicalName) {
        String name = canonicalName;
        while (true) {
            try {
                return Optional.of(ClassUtils.forName(name, JavaSnippets.class.getClassLoader()));
            } catch (ClassNotFoundException | LinkageError e) {
                int dot = name.lastIndexOf('.');
                if (dot < 0) {
                    return Optional.empty();
                }
                name = name.substring(0, dot) + "$" + name.substring(dot + 1);
                if (name.indexOf('.') < 0) {
                    return Optional.empty();
                }
            }
        }
    }

    private void add(String name, org.junit.jupiter.api.function.Executable check) {
        checks.add(ReadmeCheck.named(name, check));
    }
}
