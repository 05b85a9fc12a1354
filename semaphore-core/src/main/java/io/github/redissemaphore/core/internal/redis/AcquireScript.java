package io.github.redissemaphore.core.internal.redis;

import static io.github.redissemaphore.core.internal.redis.ScriptCall.millis;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code acquire.lua}: grants {@code count} permits to lease {@code id} now, or queues it when the
 * caller will wait, or refuses.
 *
 * @param limit     the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param id        the lease (and waiter) id
 * @param count     permits asked for
 * @param lease     the lease a grant gets
 * @param queue     whether the caller waits (queue it when it does not fit now)
 * @param fair      whether a caller may take free permits while others wait (false) or not
 * @param heartbeat how long the queue entry lives without a renewal from this JVM
 * @param inbox     the channel this JVM hears of its grants on
 * @param owner     host/pid/thread, recorded for introspection
 */
public record AcquireScript(int limit, String id, int count, Duration lease, boolean queue, boolean fair,
                            Duration heartbeat, String inbox, String owner) implements ScriptCall<AcquireScript.Acquired> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("acquire");

    /**
     * What {@code acquire} did.
     *
     * @param token the fencing token of a grant (0 otherwise)
     */
    public record Acquired(Usage usage, Status status, long token) {
        /** Granted, queued or refused. */
        public enum Status { REFUSED, GRANTED, QUEUED }
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        // Packed as acquire.lua reads them: the record's texts travel as they are stored.
        return List.of(String.valueOf(limit), id, count + " " + millis(lease) + " " + millis(heartbeat),
                inbox + " " + owner, String.valueOf((queue ? 1 : 0) + (fair ? 2 : 0)));
    }

    /** @return the lease of a grant */
    @Override
    public @Nullable Held held(Acquired reply) {
        return reply.status() == Acquired.Status.GRANTED ? new Held(id, lease) : null;
    }

    @Override
    public Acquired parse(Reply reply) {
        return new Acquired(reply.usage(limit), Acquired.Status.values()[(int) reply.number(0)], reply.number(1));
    }
}
