package io.github.redissemaphore.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every package of every module's main code is {@code @NullMarked} in its {@code package-info.java}:
 * NullAway checks only marked code, so a package without the mark would be left unchecked without
 * a word. It reads the sources of the whole project, next to this module, and fails (never skips)
 * when they are not there.
 */
class NullMarkedPackagesTest {

    /** The project root: the parent of this module, where the build runs its tests. */
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    @Test
    void everyMainPackageIsNullMarked() throws IOException {
        assertThat(ROOT.resolve("pom.xml")).as("the project's root pom next to this module").isRegularFile();
        List<Path> packages = mainPackages();
        assertThat(packages).as("packages of main code found under " + ROOT).hasSizeGreaterThan(10);
        assertThat(packages).as("packages of main code without @NullMarked in their package-info.java")
                .filteredOn(dir -> !nullMarked(dir.resolve("package-info.java")))
                .isEmpty();
    }

    /** The folders under any module's {@code src/main/java} that hold a Java file. */
    private static List<Path> mainPackages() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT, 20)) {
            return files.filter(file -> file.toString().endsWith(".java"))
                    .filter(file -> ROOT.relativize(file).toString().replace('\\', '/').matches("[^/]+/src/main/java/.*"))
                    .map(Path::getParent)
                    .distinct()
                    .sorted()
                    .toList();
        }
    }

    private static boolean nullMarked(Path packageInfo) {
        try {
            return Files.isRegularFile(packageInfo)
                    && Files.readString(packageInfo).contains("@NullMarked\npackage ");
        } catch (IOException e) {
            throw new IllegalStateException("Cannot read " + packageInfo, e);
        }
    }
}
