package io.github.redissemaphore.core.internal.redis;

import java.time.Duration;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code override.lua} about the rate (R4, {@code _rate.lua}): sets the runtime rate every call on
 * a semaphore with a rate follows, whatever its caller's configured rate, and serves the queue
 * under it at once; {@code rateLimit} 0 clears it, so each caller's own rate applies again. The
 * permits' runtime limit ({@link OverrideScript}) is left as it is. Its reply is the figures after it.
 *
 * @param limit      the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv}, which
 *                   adds the caller's configured rate: the keys must be those of a semaphore with one)
 * @param rateLimit  grants per {@code ratePeriod}, 1..100,000; 0 to clear the runtime rate
 * @param ratePeriod the window of {@code rateLimit}, whole ms within 100 ms..24 h (ignored when clearing)
 */
public record RateOverrideScript(int limit, int rateLimit, Duration ratePeriod) implements ScriptCall<Usage> {

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return OverrideScript.SCRIPT;
    }

    @Override
    public List<String> args() {
        return List.of(String.valueOf(limit), rateLimit == 0 ? "rate 0" : "rate " + rateLimit + " " + ratePeriod.toMillis());
    }

    @Override
    public Usage parse(Reply reply) {
        return reply.usage(limit);
    }
}
