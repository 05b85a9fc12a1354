package io.github.redissemaphore.core.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A script's raw reply: the {@link Usage} figures every script returns first, then the script's
 * own entries. Only the script types read it, by position; everyone else reads their named fields.
 *
 * <p>A script's usual case (the fast paths of {@code acquire.lua} and {@code release.lua}) replies
 * one text instead of a table, which costs the Redis server far less to make: {@code "<used
 * before> <permits taken, or given back with a minus> <earliest deadline, server ms> <server time
 * s> <its µs part> <own entries>"}, with no limits to report (its caller is configured as the
 * previous one, and no override is set) and nobody waiting. It is read here as the table the
 * general path would have replied.
 */
public final class Reply {

    /**
     * Index of a script's own first entry: after used, waiters, server time, earliest deadline and
     * the limits (0, or the text "previous override").
     */
    private static final int OWN = 5;
    /** How many numbers the limits entry of a capped semaphore's reply has (see {@link #cappedUsage}). */
    private static final int CAPPED_LIMITS = 7;

    private final List<Object> values;

    Reply(List<Object> values) {
        this.values = values.size() == 1 && values.get(0) instanceof byte[] text ? usualCase(text(text)) : values;
    }

    /**
     * @return the table the general path replies for what a fast path's text says; a capped
     *         semaphore's text starts with {@code "c <cap's used before> <cap> <key limit>"}, and
     *         its limits entry is then the text the general path writes of the cap (see
     *         {@link #cappedUsage})
     */
    private static List<Object> usualCase(String text) {
        String[] parts = text.split(" ");
        int at = parts[0].equals("c") ? 4 : 0;
        long delta = Long.parseLong(parts[at + 1]);
        long used = Math.max(0, Long.parseLong(parts[at]) + delta);
        long nextMillis = Long.parseLong(parts[at + 2]);
        long serverMicros = Long.parseLong(parts[at + 3]) * 1_000_000 + Long.parseLong(parts[at + 4]);
        Object limits = 0L;
        if (at > 0) {
            long capUsed = Math.max(0, Long.parseLong(parts[1]) + delta);
            limits = (parts[2] + " 0 " + capUsed + " 0 0 " + parts[2] + " " + parts[3])
                    .getBytes(StandardCharsets.UTF_8);
        }
        List<Object> values = new ArrayList<>(
                List.of(used, 0L, serverMicros, nextMillis - serverMicros / 1000, limits));
        for (int i = at + 5; i < parts.length; i++) {
            values.add(Long.parseLong(parts[i]));
        }
        return values;
    }

    /**
     * @param limit the limit the call carried (the caller's configured permits, ARGV 1)
     * @return the figures every script returns
     */
    Usage usage(int limit) {
        if (values.get(4) instanceof Number) {
            return new Usage((int) at(0), limit, (int) at(1), at(2), at(3), limit, 0);
        }
        // "<configured limit of the previous call> <override>", each 0 when none; a capped
        // semaphore's carries its cap's figures too (see cappedUsage)
        String[] limits = text(values.get(4)).split(" ");
        if (limits.length == CAPPED_LIMITS) {
            return cappedUsage(limit, limits);
        }
        int previous = Integer.parseInt(limits[0]);
        int override = Integer.parseInt(limits[1]);
        // (a third entry: the other rate of a rate mismatch, see _rate.lua)
        return new Usage((int) at(0), override > 0 ? override : limit, (int) at(1), at(2), at(3), previous,
                override, null, limits.length == 3 ? limits[2] : null);
    }

    /**
     * A capped semaphore's reply: used and waiters of the key, and the limits as "<configured cap
     * of the previous call> <cap override> <cap used> <cap waiters> <the key's runtime limit> <the
     * cap of the call> <configured permits per key of the previous call>" (the scripts' LAST_TOTAL,
     * OVERRIDE, USED, WAITERS, the key's override, TOTAL_LIMIT and ' each'). The key's own limit is
     * the caller's {@code limit} unless it has a runtime limit.
     */
    private Usage cappedUsage(int limit, String[] limits) {
        int keyOverride = Integer.parseInt(limits[4]);
        int previousPermits = Integer.parseInt(limits[6]);
        int capOverride = Integer.parseInt(limits[1]);
        Usage.Total total = new Usage.Total(Integer.parseInt(limits[2]), Integer.parseInt(limits[5]),
                Integer.parseInt(limits[3]), Integer.parseInt(limits[0]), capOverride);
        return new Usage((int) at(0), keyOverride > 0 ? keyOverride : limit, (int) at(1), at(2), at(3),
                previousPermits > 0 ? previousPermits : limit, keyOverride, total);
    }

    /** @return the script's own entry {@code index} (from 0), a number */
    long number(int index) {
        return at(OWN + index);
    }

    /** @return how many own entries the script replied */
    int size() {
        return values.size() - OWN;
    }

    /** @return the script's own entry {@code index} (from 0), a list of entries */
    List<?> list(int index) {
        return (List<?>) values.get(OWN + index);
    }

    /** @return entry {@code index} (from 0) of a reply that carries no figures (presence.lua's) */
    Object raw(int index) {
        return values.get(index);
    }

    private long at(int index) {
        return ((Number) values.get(index)).longValue();
    }

    /** @return an entry of a nested list read as text */
    static String text(Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    /** @return an entry of a nested list read as a number */
    static long number(Object value) {
        return ((Number) value).longValue();
    }
}
