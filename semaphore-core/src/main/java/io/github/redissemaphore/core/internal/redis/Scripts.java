package io.github.redissemaphore.core.internal.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * Reads the Lua scripts that are the whole algorithm from the class path. Their sources are in
 * {@value #LOCATION}; each starts with a comment stating its KEYS, ARGV and reply, and all share
 * {@code _common.lua} (purge, grant, TTLs), which is prepended here so no logic is written twice.
 * Each script type ({@link AcquireScript}, ...) loads its script once, when it is first used.
 */
public final class Scripts {

    /** Where the scripts are on the class path: one {@code <name>.lua} per script, and {@code _common.lua}. */
    public static final String LOCATION = "io/github/redissemaphore/scripts/";

    private Scripts() {
    }

    /**
     * @param name {@code acquire}, {@code release}, {@code renew}, {@code cancel}, {@code state},
     *             {@code lease} or {@code override}
     * @return that script with the shared part prepended
     */
    @SuppressWarnings("rawtypes")
    public static RedisScript<List> load(String name) {
        return RedisScript.of(read("_common") + read(name), List.class);
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
