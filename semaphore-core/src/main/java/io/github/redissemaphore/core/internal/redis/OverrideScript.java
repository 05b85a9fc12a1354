package io.github.redissemaphore.core.internal.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code override.lua}: sets the runtime limit every call on the semaphore follows, whatever its
 * caller is configured with, and serves the queue under it at once; {@code override} 0 clears it,
 * so each caller's own limit applies again. Its reply is the figures under the new limit.
 *
 * @param limit    the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param override the runtime limit, 0 to clear it
 */
public record OverrideScript(int limit, int override) implements ScriptCall<Usage> {

    /** Also {@link RateOverrideScript}'s: one script sets either runtime limit. */
    @SuppressWarnings("rawtypes")
    static final RedisScript<List> SCRIPT = Scripts.load("override");

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        return List.of(String.valueOf(limit), String.valueOf(override));
    }

    @Override
    public Usage parse(Reply reply) {
        return reply.usage(limit);
    }
}
