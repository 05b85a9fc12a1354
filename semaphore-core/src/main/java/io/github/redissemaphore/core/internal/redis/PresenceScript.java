package io.github.redissemaphore.core.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code presence.lua}: this instance uses the semaphore, seen for {@code seenFor}; the reply
 * names every instance seen.
 *
 * @param instance this instance's id
 * @param seenFor  how long it counts as seen without another call
 */
public record PresenceScript(String instance, Duration seenFor) implements ScriptCall<List<String>> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("presence");

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        return List.of(instance, ScriptCall.millis(seenFor));
    }

    @Override
    public List<String> parse(Reply reply) {
        int seen = (int) Reply.number(reply.raw(0));
        List<String> instances = new ArrayList<>(seen);
        for (int i = 1; i <= seen; i++) {
            instances.add(Reply.text(reply.raw(i)));
        }
        return instances;
    }
}
