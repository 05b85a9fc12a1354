package io.github.redissemaphore.chaos;

import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The independent witness of who is inside: counters on a second Redis that the semaphore never
 * uses and that no fault touches. Every change is one Lua call, so the count is exact.
 *
 * <ul>
 * <li>{@code inside}: permits held by callers between "enter" (after tryAcquire returned a permit)
 *     and "leave" (before release, or as soon as the holder learns its lease is lost);</li>
 * <li>{@code per} (hash): the same, per worker JVM, so that a worker killed with SIGKILL can be
 *     {@link #bury buried}: its contribution is removed and later calls of it are ignored (a
 *     command of the dead JVM still in a socket buffer cannot count);</li>
 * <li>{@code max}: the largest {@code inside} seen; {@code over} (list): "serverMs wid inside" of
 *     every enter that took {@code inside} above the permits; {@code enters}: the number of enters;</li>
 * <li>{@code late}: enters refused because the holder's lease, as its JVM measured it, had already
 *     ended when the enter reached the witness (the holder's process stalled between the grant and
 *     the start of its work; a holder that checks its lease right before working would not start).
 *     The witness and the workers share this machine's clock.</li>
 * </ul>
 */
final class Witness {

    private static final RedisScript<Long> ENTER = RedisScript.of("""
            if redis.call('SISMEMBER', 'dead', ARGV[1]) == 1 then return -1 end
            local t = redis.call('TIME')
            local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            if nowMs > tonumber(ARGV[4]) then
              redis.call('INCR', 'late')
              return -2
            end
            redis.call('HINCRBY', 'per', ARGV[1], ARGV[2])
            local inside = redis.call('INCRBY', 'inside', ARGV[2])
            redis.call('INCR', 'enters')
            if inside > tonumber(redis.call('GET', 'max') or '0') then redis.call('SET', 'max', inside) end
            if inside > tonumber(ARGV[3]) then
              redis.call('RPUSH', 'over', nowMs .. ' ' .. ARGV[1] .. ' ' .. inside)
            end
            return inside
            """, Long.class);

    private static final RedisScript<Long> LEAVE = RedisScript.of("""
            if redis.call('SISMEMBER', 'dead', ARGV[1]) == 1 then return -1 end
            redis.call('HINCRBY', 'per', ARGV[1], -tonumber(ARGV[2]))
            return redis.call('DECRBY', 'inside', ARGV[2])
            """, Long.class);

    private static final RedisScript<Long> BURY = RedisScript.of("""
            redis.call('SADD', 'dead', ARGV[1])
            local mine = tonumber(redis.call('HGET', 'per', ARGV[1]) or '0')
            redis.call('HDEL', 'per', ARGV[1])
            redis.call('DECRBY', 'inside', mine)
            return mine
            """, Long.class);

    private final StringRedisTemplate redis;
    private final int permits;

    Witness(StringRedisTemplate redis, int permits) {
        this.redis = redis;
        this.permits = permits;
    }

    /**
     * Counts {@code n} permits of worker {@code wid} inside, unless the witness's clock is past
     * {@code validUntilMs} (epoch ms) when the call reaches it.
     *
     * @return whether they now count as inside
     */
    boolean enter(String wid, int n, long validUntilMs) {
        Long inside = redis.execute(ENTER, List.of(), wid, String.valueOf(n), String.valueOf(permits),
                String.valueOf(validUntilMs));
        return inside != null && inside >= 0;
    }

    void leave(String wid, int n) {
        redis.execute(LEAVE, List.of(), wid, String.valueOf(n));
    }

    /** A worker is dead: takes out what it had inside, and ignores it from now on. @return that */
    long bury(String wid) {
        return redis.execute(BURY, List.of(), wid);
    }

    long max() {
        String max = redis.opsForValue().get("max");
        return max == null ? 0 : Long.parseLong(max);
    }

    long inside() {
        String inside = redis.opsForValue().get("inside");
        return inside == null ? 0 : Long.parseLong(inside);
    }

    long late() {
        String late = redis.opsForValue().get("late");
        return late == null ? 0 : Long.parseLong(late);
    }

    long enters() {
        String enters = redis.opsForValue().get("enters");
        return enters == null ? 0 : Long.parseLong(enters);
    }

    /** @return {serverMs, inside} of every enter that went above the permits, with the worker id */
    List<String[]> over() {
        List<String[]> over = new ArrayList<>();
        List<String> raw = redis.opsForList().range("over", 0, -1);
        if (raw != null) {
            raw.forEach(line -> over.add(line.split(" ")));
        }
        return over;
    }
}
