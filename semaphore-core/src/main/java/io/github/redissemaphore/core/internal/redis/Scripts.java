package io.github.redissemaphore.core.internal.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * Reads the Lua scripts that are the whole algorithm from the class path. Their sources are in
 * {@value #LOCATION}; each starts with a comment stating its KEYS, ARGV and reply. What they share
 * (arguments, the state read, purge, grant, the final write and TTLs) is in {@code _<part>.lua}
 * files that a script includes with a line {@code --@include _<part>.lua}, expanded here: the
 * shared code runs inline, so a call does not define a library of functions first, and no logic
 * is written twice. Each script type ({@link AcquireScript}, ...) loads its script once, when it
 * is first used.
 */
public final class Scripts {

    /** Where the scripts are on the class path: one {@code <name>.lua} per script, and the shared parts. */
    public static final String LOCATION = "io/github/redissemaphore/scripts/";

    private Scripts() {
    }

    /** The line that includes a shared part: {@code --@include _<part>.lua}. */
    private static final Pattern INCLUDE = Pattern.compile("^--@include (_[a-z]+)\\.lua$", Pattern.MULTILINE);

    /**
     * @param name {@code acquire}, {@code release}, {@code renew}, {@code cancel}, {@code state},
     *             {@code lease} or {@code override}
     * @return that script with its shared parts included
     */
    @SuppressWarnings("rawtypes")
    public static RedisScript<List> load(String name) {
        return RedisScript.of(source(name), List.class);
    }

    /** @return the source of script {@code name} with every include line replaced by that part */
    static String source(String name) {
        Matcher include = INCLUDE.matcher(read(name));
        StringBuilder source = new StringBuilder();
        while (include.find()) {
            include.appendReplacement(source, Matcher.quoteReplacement(read(include.group(1)).stripTrailing()));
        }
        return include.appendTail(source).toString();
    }

    private static String read(String name) {
        try (InputStream in = Scripts.class.getResourceAsStream("/" + LOCATION + name + ".lua")) {
            if (in == null) {
                throw new IllegalArgumentException("No semaphore script named '" + name + "' in " + LOCATION);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read semaphore script " + name, e);
        }
    }
}
