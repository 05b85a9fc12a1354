package io.github.redissemaphore.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The five Lua scripts that are the whole algorithm, each loaded once and run by EVALSHA. Their
 * sources are in {@code io/github/redissemaphore/scripts/} on the class path; each starts with a
 * comment stating its KEYS, ARGV and return value, and all share {@code _common.lua} (purge,
 * grant, TTLs), which is prepended when loading so no logic is written twice.
 *
 * @param acquire grant now, or queue the caller, or refuse
 * @param release give a lease back and hand its permits to the queue
 * @param renew   extend one JVM's leases and waiter heartbeats, report grants and losses
 * @param cancel  take a waiter out of the queue, reporting a grant that happened meanwhile
 * @param state   read a semaphore for introspection
 */
@SuppressWarnings("rawtypes")
public record SemaphoreScripts(RedisScript<List> acquire, RedisScript<List> release, RedisScript<List> renew,
                               RedisScript<List> cancel, RedisScript<List> state) {

    private static final String FOLDER = "/io/github/redissemaphore/scripts/";

    public SemaphoreScripts {
        Objects.requireNonNull(acquire, "acquire");
        Objects.requireNonNull(release, "release");
        Objects.requireNonNull(renew, "renew");
        Objects.requireNonNull(cancel, "cancel");
        Objects.requireNonNull(state, "state");
    }

    /** @return all five scripts, read from the class path */
    public static SemaphoreScripts load() {
        return new SemaphoreScripts(script("acquire"), script("release"), script("renew"), script("cancel"),
                script("state"));
    }

    /**
     * @param name {@code acquire}, {@code release}, {@code renew}, {@code cancel} or {@code state}
     * @return that script with the shared part prepended
     */
    public static RedisScript<List> script(String name) {
        return RedisScript.of(read("_common") + read(name), List.class);
    }

    private static String read(String name) {
        try (InputStream in = SemaphoreScripts.class.getResourceAsStream(FOLDER + name + ".lua")) {
            if (in == null) {
                throw new IllegalArgumentException("No semaphore script named '" + name + "' in " + FOLDER);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read semaphore script " + name, e);
        }
    }
}
