package io.github.redissemaphore.core.internal.redis;

import static io.github.redissemaphore.core.internal.redis.ScriptCall.flag;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code cancel.lua}: takes waiter {@code id} out of the queue; with {@code release}, gives back a
 * grant it got meanwhile (else confirms that grant as a full lease, and reports it).
 *
 * @param limit   the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param id      the waiter
 * @param release whether a grant found is given back
 */
public record CancelScript(int limit, String id, boolean release) implements ScriptCall<CancelScript.Cancelled> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("cancel");

    /**
     * What {@code cancel} did.
     *
     * @param grantedToken the token of a grant found (0 when the waiter left the queue)
     */
    public record Cancelled(Usage usage, long grantedToken) {
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        return List.of(String.valueOf(limit), id, flag(release));
    }

    @Override
    public Cancelled parse(Reply reply) {
        return new Cancelled(reply.usage(limit), reply.number(0));
    }
}
