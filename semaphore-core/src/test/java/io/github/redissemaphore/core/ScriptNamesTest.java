package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import io.github.redissemaphore.core.internal.redis.Scripts;

/**
 * The names the script parts share are listed in one place, {@code _names.lua}, which every
 * script includes first: a name a part declares at its top level and that list do not drift apart.
 */
class ScriptNamesTest {

    private static final String NAMES = "_names.lua";
    /** {@code local function name(} or {@code local A, B = } at the start of a line: a top-level declaration. */
    private static final Pattern DECLARATION = Pattern.compile("^local (?:function (\\w+)|([\\w, ]+?)\\s*=)",
            Pattern.MULTILINE);
    private static final Pattern INCLUDE = Pattern.compile("^--@include (_[a-z]+\\.lua)$", Pattern.MULTILINE);

    @Test
    void everyNameAPartDeclaresIsListedInNames() throws IOException {
        String listed = read(NAMES);
        assertThat(listed.lines()).as(NAMES + " is comments only: it runs nothing")
                .allMatch(line -> line.isEmpty() || line.startsWith("--"));
        List<String> missing = new ArrayList<>();
        int declared = 0;
        for (Resource part : scripts()) {
            String file = part.getFilename();
            if (!file.startsWith("_") || file.equals(NAMES)) {
                continue;
            }
            Matcher declaration = DECLARATION.matcher(read(file));
            while (declaration.find()) {
                String names = declaration.group(1) != null ? declaration.group(1) : declaration.group(2);
                for (String name : names.split(",")) {
                    declared++;
                    if (!Pattern.compile("(?m)^--.*(?<![\\w'])" + Pattern.quote(name.strip()) + "(?![\\w'])")
                            .matcher(listed).find()) {
                        missing.add(file + ": " + name.strip());
                    }
                }
            }
        }
        assertThat(declared).as("top-level names declared by the parts").isGreaterThan(40);
        assertThat(missing).as("names declared by a part but not listed in " + NAMES).isEmpty();
    }

    @Test
    void everyScriptIncludesNamesFirst() throws IOException {
        int checked = 0;
        for (Resource script : scripts()) {
            String file = script.getFilename();
            if (file.startsWith("_")) {
                continue;
            }
            Matcher include = INCLUDE.matcher(read(file));
            assertThat(include.find()).as("%s includes parts", file).isTrue();
            assertThat(include.group(1)).as("the first part %s includes", file).isEqualTo(NAMES);
            checked++;
        }
        assertThat(checked).isEqualTo(8);
    }

    private static Resource[] scripts() throws IOException {
        return new PathMatchingResourcePatternResolver().getResources("classpath*:" + Scripts.LOCATION + "*.lua");
    }

    private static String read(String file) throws IOException {
        try (InputStream in = ScriptNamesTest.class.getResourceAsStream("/" + Scripts.LOCATION + file)) {
            assertThat(in).as(file).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
