package io.github.redissemaphore.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts that are the whole algorithm, each loaded once and run by EVALSHA. Their
 * sources are in {@code io/github/redissemaphore/scripts/} on the class path; each starts with a
 * comment stating its KEYS, ARGV and return value, and all share {@code _common.lua} (purge,
 * grant, TTLs), which is prepended when loading so no logic is written twice.
 *
 * @param acquire grant now, or queue the caller, or refuse
 * @param release give a lease back and hand its permits to the queue
 * @param renew   extend one JVM's leases and waiter heartbeats, report grants and losses
 * @param cancel  take a waiter out of the queue, reporting a grant that happened meanwhile
 * @param state   read a semaphore for introspection
 * @param lease   re-lease a holder: adopt it into another JVM, or extend it by a new lease length
 * @param override set or clear the runtime limit every JVM follows
 */
@SuppressWarnings("rawtypes")
public record SemaphoreScripts(RedisScript<List> acquire, RedisScript<List> release, RedisScript<List> renew,
                               RedisScript<List> cancel, RedisScript<List> state, RedisScript<List> lease,
                               RedisScript<List> override) {

    /** Where the scripts are on the class path: one {@code <name>.lua} per script, and {@code _common.lua}. */
    public static final String LOCATION = "io/github/redissemaphore/scripts/";

    public SemaphoreScripts {
        Objects.requireNonNull(acquire, "acquire");
        Objects.requireNonNull(release, "release");
        Objects.requireNonNull(renew, "renew");
        Objects.requireNonNull(cancel, "cancel");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(override, "override");
    }

    /** The first five of the scripts; {@code lease} and {@code override} are read from the class path. */
    public SemaphoreScripts(RedisScript<List> acquire, RedisScript<List> release, RedisScript<List> renew,
                            RedisScript<List> cancel, RedisScript<List> state) {
        this(acquire, release, renew, cancel, state, script("lease"), script("override"));
    }

    /** @return all the scripts, read from the class path */
    public static SemaphoreScripts load() {
        return new SemaphoreScripts(script("acquire"), script("release"), script("renew"), script("cancel"),
                script("state"), script("lease"), script("override"));
    }

    /**
     * @param name {@code acquire}, {@code release}, {@code renew}, {@code cancel}, {@code state} or
     *             {@code lease} or {@code override}
     * @return that script with the shared part prepended
     */
    public static RedisScript<List> script(String name) {
        return RedisScript.of(read("_common") + read(name), List.class);
    }

    private static String read(String name) {
        try (InputStream in = SemaphoreScripts.class.getResourceAsStream("/" + LOCATION + name + ".lua")) {
            if (in == null) {
                throw new IllegalArgumentException("No semaphore script named '" + name + "' in " + LOCATION);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read semaphore script " + name, e);
        }
    }
}
