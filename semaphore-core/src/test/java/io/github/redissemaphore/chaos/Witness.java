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
 *     and "leave" (before release, or as soon as the holder learns its lease is lost); of a capped
 *     semaphore, in all keys together, and {@code inside:<key>} per key;</li>
 * <li>{@code per:<wid>} (hash, key -> permits; the field "" when uncapped): the same, per worker
 *     JVM, so that a worker killed with SIGKILL can be {@link #bury buried}: its contribution is
 *     removed and later calls of it are ignored (a command of the dead JVM still in a socket buffer
 *     cannot count);</li>
 * <li>{@code max}, {@code maxKey}: the largest {@code inside} and {@code inside:<key>} seen;
 *     {@code over} (list): every enter that took {@code inside} above the total or a key above its
 *     permits (see {@link Over}); {@code enters}: the number of enters;</li>
 * <li>{@code late}: enters refused because the holder's lease, as its JVM measured it, had already
 *     ended when the enter reached the witness (the holder's process stalled between the grant and
 *     the start of its work; a holder that checks its lease right before working would not start).
 *     The witness and the workers share this machine's clock.</li>
 * </ul>
 */
final class Witness {

    /** An enter above a limit: at (witness server ms), by whom, the count in all and in its key after it. */
    record Over(long atMs, String wid, long inside, String key, long keyInside) {
    }

    // ARGV: wid, n, total limit, valid until (ms), key ('' when uncapped), key limit.
    private static final RedisScript<Long> ENTER = RedisScript.of("""
            if redis.call('SISMEMBER', 'dead', ARGV[1]) == 1 then return -1 end
            local t = redis.call('TIME')
            local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            if nowMs > tonumber(ARGV[4]) then
              redis.call('INCR', 'late')
              return -2
            end
            redis.call('HINCRBY', 'per:' .. ARGV[1], ARGV[5], ARGV[2])
            local inside = redis.call('INCRBY', 'inside', ARGV[2])
            redis.call('INCR', 'enters')
            if inside > tonumber(redis.call('GET', 'max') or '0') then redis.call('SET', 'max', inside) end
            local keyInside = inside
            if ARGV[5] ~= '' then
              keyInside = redis.call('INCRBY', 'inside:' .. ARGV[5], ARGV[2])
              if keyInside > tonumber(redis.call('GET', 'maxKey') or '0') then redis.call('SET', 'maxKey', keyInside) end
            end
            if inside > tonumber(ARGV[3]) or keyInside > tonumber(ARGV[6]) then
              redis.call('RPUSH', 'over', nowMs .. ' ' .. ARGV[1] .. ' ' .. inside .. ' ' .. keyInside .. ' ' .. ARGV[5])
            end
            return inside
            """, Long.class);

    private static final RedisScript<Long> LEAVE = RedisScript.of("""
            if redis.call('SISMEMBER', 'dead', ARGV[1]) == 1 then return -1 end
            redis.call('HINCRBY', 'per:' .. ARGV[1], ARGV[3], -tonumber(ARGV[2]))
            if ARGV[3] ~= '' then redis.call('DECRBY', 'inside:' .. ARGV[3], ARGV[2]) end
            return redis.call('DECRBY', 'inside', ARGV[2])
            """, Long.class);

    private static final RedisScript<Long> BURY = RedisScript.of("""
            redis.call('SADD', 'dead', ARGV[1])
            local per = redis.call('HGETALL', 'per:' .. ARGV[1])
            local mine = 0
            for i = 1, #per, 2 do
              local n = tonumber(per[i + 1])
              mine = mine + n
              if per[i] ~= '' then redis.call('DECRBY', 'inside:' .. per[i], n) end
            end
            redis.call('DEL', 'per:' .. ARGV[1])
            redis.call('DECRBY', 'inside', mine)
            return mine
            """, Long.class);

    private final StringRedisTemplate redis;
    private final int total;
    private final int keyPermits;

    /**
     * @param total      the permits all callers together may hold (of an uncapped semaphore, its permits)
     * @param keyPermits the permits each key may hold (uncapped: the same as total)
     */
    Witness(StringRedisTemplate redis, int total, int keyPermits) {
        this.redis = redis;
        this.total = total;
        this.keyPermits = keyPermits;
    }

    /**
     * Counts {@code n} permits of worker {@code wid} inside (in {@code key}, null when uncapped),
     * unless the witness's clock is past {@code validUntilMs} (epoch ms) when the call reaches it.
     *
     * @return whether they now count as inside
     */
    boolean enter(String wid, String key, int n, long validUntilMs) {
        Long inside = redis.execute(ENTER, List.of(), wid, String.valueOf(n), String.valueOf(total),
                String.valueOf(validUntilMs), key == null ? "" : key, String.valueOf(keyPermits));
        return inside != null && inside >= 0;
    }

    void leave(String wid, String key, int n) {
        redis.execute(LEAVE, List.of(), wid, String.valueOf(n), key == null ? "" : key);
    }

    /** A worker is dead: takes out what it had inside, and ignores it from now on. @return that */
    long bury(String wid) {
        return redis.execute(BURY, List.of(), wid);
    }

    long max() {
        return number("max");
    }

    /** @return the largest count seen inside one key (0 when uncapped) */
    long maxKey() {
        return number("maxKey");
    }

    long inside() {
        return number("inside");
    }

    /** @return the count inside {@code key} of a capped semaphore */
    long inside(String key) {
        return number("inside:" + key);
    }

    long late() {
        return number("late");
    }

    long enters() {
        return number("enters");
    }

    private long number(String name) {
        String value = redis.opsForValue().get(name);
        return value == null ? 0 : Long.parseLong(value);
    }

    /** @return every enter that went above the total or its key's permits */
    List<Over> over() {
        List<Over> over = new ArrayList<>();
        List<String> raw = redis.opsForList().range("over", 0, -1);
        if (raw != null) {
            for (String line : raw) {
                String[] p = line.split(" ", -1);
                over.add(new Over(Long.parseLong(p[0]), p[1], Long.parseLong(p[2]), p[4].isEmpty() ? null : p[4],
                        Long.parseLong(p[3])));
            }
        }
        return over;
    }
}
