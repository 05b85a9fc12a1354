package io.github.redissemaphore.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The three keys of one semaphore as {@link ModelBasedTest} sees them after a step, read by one
 * small read-only Lua script so the picture is atomic (no script of the semaphore runs half-way
 * through it), together with the server time of the read and every key's absolute expiry. The
 * contents are shown as the parts of the data model ({@code _args.lua}), split out of the keys
 * that hold them: the deadlines key's ids not in the queue are holders, those in it waiters; the
 * state hash's fields named with a leading space are the state, the others the records.
 *
 * @param nowMs         server time of the read, ms
 * @param nowUs         server time of the read, us (fencing tokens and tickets are at least the
 *                      server time in us when they are issued)
 * @param holders       permit id -> lease deadline (server ms), in deadline order
 * @param state         the state fields (used, seq, expires, ...), named without their space, and
 *                      the limits field as limit and override
 * @param queue         waiter id -> ticket, in ticket order
 * @param queueDeadline waiter id -> heartbeat deadline (server ms)
 * @param rawInfo       id -> the record as stored
 * @param info          id -> the parsed record (absent when it does not parse)
 * @param expireAt      per key, in KEYS order: absolute expiry in server ms, -1 without expiry,
 *                      -2 when the key does not exist
 */
record ModelSnapshot(long nowMs, long nowUs, Map<String, Long> holders, Map<String, String> state,
                     Map<String, Long> queue, Map<String, Long> queueDeadline, Map<String, String> rawInfo,
                     Map<String, Info> info, long[] expireAt) {

    /** Names of the three keys, in KEYS order, for messages. */
    static final List<String> KEY_NAMES = List.of("deadlines", "state", "queue");

    /** One info record: "count lease claim token inbox owner". */
    record Info(int count, long lease, long claim, long token, String inbox, String owner) {
    }

    private static final Pattern INFO = Pattern.compile("^(\\d+) (\\d+) (\\d+) (\\d+) (\\S+) (.*)$", Pattern.DOTALL);

    /**
     * Read-only: TIME, the contents of the three keys and their absolute expiry (PEXPIRETIME where
     * the server has it, else the server clock + PTTL).
     */
    private static final String READ = """
            local t = redis.call('TIME')
            local out = { t[1], t[2] }
            out[3] = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
            out[4] = redis.call('HGETALL', KEYS[2])
            out[5] = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
            local expiry = {}
            for i = 1, 3 do
              local at = redis.pcall('PEXPIRETIME', KEYS[i])
              if type(at) ~= 'number' then
                -- Redis 6: the clock of this moment, not of the script's start.
                local pttl = redis.call('PTTL', KEYS[i])
                local c = redis.call('TIME')
                if pttl >= 0 then at = tonumber(c[1]) * 1000 + math.floor(tonumber(c[2]) / 1000) + pttl else at = pttl end
              end
              expiry[i] = at
            end
            out[6] = expiry
            return out
            """;

    /** Reads the keys (deadlines, state, queue) atomically. */
    static ModelSnapshot read(RedisCommands<String, String> redis, List<String> keys) {
        List<Object> reply = redis.eval(READ, ScriptOutputType.MULTI, keys.toArray(new String[0]));
        long seconds = Long.parseLong(String.valueOf(reply.get(0)));
        long micros = Long.parseLong(String.valueOf(reply.get(1)));
        Map<String, Long> deadlines = scores(reply.get(2));
        Map<String, Long> queue = scores(reply.get(4));
        Map<String, Long> holders = new LinkedHashMap<>();
        Map<String, Long> queueDeadline = new LinkedHashMap<>();
        StateHash.splitDeadlines(deadlines, queue, holders, queueDeadline);
        Map<String, String> state = new LinkedHashMap<>();
        Map<String, String> rawInfo = new LinkedHashMap<>();
        StateHash.split(hash(reply.get(3)), state, rawInfo);
        Map<String, Info> info = new LinkedHashMap<>();
        rawInfo.forEach((id, value) -> {
            Info parsed = parse(value);
            if (parsed != null) {
                info.put(id, parsed);
            }
        });
        List<?> expiry = (List<?>) reply.get(5);
        long[] expireAt = new long[KEY_NAMES.size()];
        for (int i = 0; i < expireAt.length; i++) {
            expireAt[i] = ((Number) expiry.get(i)).longValue();
        }
        return new ModelSnapshot(seconds * 1000 + micros / 1000, seconds * 1_000_000 + micros,
                Collections.unmodifiableMap(holders), Collections.unmodifiableMap(state),
                Collections.unmodifiableMap(queue), Collections.unmodifiableMap(queueDeadline),
                Collections.unmodifiableMap(rawInfo), Collections.unmodifiableMap(info), expireAt);
    }

    /** @return the parsed record, or null when it does not have the documented shape */
    static Info parse(String value) {
        if (value == null) {
            return null;
        }
        Matcher m = INFO.matcher(value);
        if (!m.matches()) {
            return null;
        }
        try {
            return new Info(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                    Long.parseLong(m.group(4)), m.group(5), m.group(6));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** @return whether the key at that index (0..2) exists */
    boolean exists(int key) {
        return expireAt[key] != -2;
    }

    /** @return the value of a numeric field of the state hash, or null */
    Long stateNumber(String field) {
        String value = state.get(field);
        if (value == null) {
            return null;
        }
        try {
            return (long) Double.parseDouble(value);
        } catch (NumberFormatException e) {
            return Long.MIN_VALUE;
        }
    }

    /** @return the sum of the info counts of the holders (a holder without a parsable record counts 1) */
    int heldCount() {
        int sum = 0;
        for (String id : holders.keySet()) {
            Info r = info.get(id);
            sum += r == null ? 1 : r.count();
        }
        return sum;
    }

    /** @return the holder with the highest fencing token, or null */
    String newestHolder() {
        String newest = null;
        long best = Long.MIN_VALUE;
        for (String id : holders.keySet()) {
            Info r = info.get(id);
            if (r != null && r.token() > best) {
                best = r.token();
                newest = id;
            }
        }
        return newest;
    }

    /** @return the waiter at the head of the queue (lowest ticket), or null */
    String head() {
        return queue.isEmpty() ? null : queue.keySet().iterator().next();
    }

    private static Map<String, Long> scores(Object value) {
        Map<String, Long> map = new LinkedHashMap<>();
        List<?> flat = (List<?>) value;
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            String score = String.valueOf(flat.get(i + 1));
            // (+inf, the score of the deadlines key's sentinel, as the largest.)
            map.put(String.valueOf(flat.get(i)), score.endsWith("inf") ? Long.MAX_VALUE
                    : (long) Double.parseDouble(score));
        }
        return map;
    }

    private static Map<String, String> hash(Object value) {
        Map<String, String> map = new LinkedHashMap<>();
        List<?> flat = (List<?>) value;
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            map.put(String.valueOf(flat.get(i)), String.valueOf(flat.get(i + 1)));
        }
        return map;
    }

    /** @return a compact text of the whole snapshot, for failure messages */
    String describe() {
        StringBuilder text = new StringBuilder();
        text.append("  server time ").append(nowMs).append(" ms\n");
        text.append("  state ").append(state).append('\n');
        text.append("  holders (id: deadline-now ms, info):\n");
        holders.forEach((id, deadline) -> text.append("    ").append(id).append(": ").append(deadline - nowMs)
                .append(" ms, ").append(rawInfo.get(id)).append('\n'));
        text.append("  queue (id: ticket, heartbeat deadline-now ms, info):\n");
        queue.forEach((id, ticket) -> {
            Long deadline = queueDeadline.get(id);
            text.append("    ").append(id).append(": ").append(ticket).append(", ")
                    .append(deadline == null ? "none" : String.valueOf(deadline - nowMs)).append(" ms, ")
                    .append(rawInfo.get(id)).append('\n');
        });
        List<String> expiry = new ArrayList<>();
        for (int i = 0; i < KEY_NAMES.size(); i++) {
            expiry.add(KEY_NAMES.get(i) + "=" + (expireAt[i] < 0 ? String.valueOf(expireAt[i])
                    : "+" + (expireAt[i] - nowMs) + "ms"));
        }
        text.append("  expiry ").append(expiry).append('\n');
        return text.toString();
    }
}
