package io.github.redissemaphore.sample.readme;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.function.Executable;

/**
 * A check of one thing the README or a page of {@code docs/} writes, as a dynamic test named after
 * it. Its failure message starts with that name too, since build reports show a dynamic test by its
 * index.
 */
final class ReadmeCheck {

    private ReadmeCheck() {
    }

    /** @param name {@code <page> line <n>: <what is checked>}, such as {@code docs/operating.md line 12: ...} */
    static DynamicTest named(String name, Executable check) {
        return DynamicTest.dynamicTest(name, () -> {
            try {
                check.execute();
            } catch (AssertionError e) {
                throw new AssertionError(name + ": " + e.getMessage(), e);
            }
        });
    }
}
