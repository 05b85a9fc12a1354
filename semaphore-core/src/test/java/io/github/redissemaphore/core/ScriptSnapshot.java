package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * What the three keys of one semaphore hold (five of a capped one), read in one read-only Lua call
 * so the picture is atomic: contents, absolute expiry (ms) and a hex DUMP of every key, and the
 * server time. The contents are shown as the parts of the data model ({@code _args.lua}): the
 * deadlines of the holders and of the waiters, the state fields and the records, all split out of
 * the keys that hold them. Checks the data-model invariants I1, I2, I4 and the TTL part of I6 on
 * it, and those of the two levels of a capped semaphore, K1..K4 ({@code _keys.lua}).
 *
 * <p>Of a capped semaphore ({@link SemaphoreKeys#capped}, read with the key null) the ids are the
 * members as stored, {@code "<key> <id>"}, the counters are the cap's, and every key's counters
 * are the state field {@code k:<key>}.
 *
 * @param nowMs         server time of the read, ms
 * @param holders       permit id -> lease deadline (ms): the ids of the deadlines key not in the queue
 * @param state         the fields of the state hash (used, seq, expires, waiters, next; capped,
 *                      k:&lt;key&gt; too), named without their leading space, and its limits field
 *                      as limit and override
 * @param queue         waiter id -> ticket
 * @param queueDeadline waiter id -> heartbeat deadline (ms): the ids of the deadlines key in the queue
 * @param info          id -> raw record (the state hash's other fields)
 * @param expireAt      key -> absolute expiry in ms (-1: no TTL; -2: no such key)
 * @param dumps         key -> hex of DUMP ("" when the key does not exist)
 * @param heads         capped: the heads key's members, "&lt;key&gt; &lt;ticket&gt; &lt;id&gt;", in
 *                      its order (empty when uncapped)
 * @param ready         capped: the ready key's members, "&lt;ticket&gt; &lt;key&gt;", in its order,
 *                      with their scores (empty when uncapped)
 */
public record ScriptSnapshot(long nowMs, Map<String, Long> holders, Map<String, String> state, Map<String, Long> queue,
                      Map<String, Long> queueDeadline, Map<String, String> info, Map<String, Long> expireAt,
                      Map<String, String> dumps, List<String> heads, Map<String, Long> ready) {

    /** One parsed info record: "count lease claim token inbox owner". */
    public record Info(int count, long lease, long claim, long token, String inbox, String owner) {
    }

    /** The counters of one key of a capped semaphore, its state field "used waiters ready override". */
    public record KeyCounters(int used, int waiters, String ready, int override) {
    }

    private static final Pattern INFO = Pattern.compile("^(\\d+) (\\d+) (\\d+) (\\d+) (\\S+) (.*)$", Pattern.DOTALL);

    /**
     * How far {@link #expireAt()} may be off, in ms. Exact on Redis 7 ({@code PEXPIRETIME}); Redis 6
     * has only {@code PTTL}, so the expiry is the server clock plus it, and a loaded server may move
     * on a few ms between the two. The scripts never move an expiry by less than seconds (see
     * {@code KEY_MARGIN_MS} in {@code _args.lua}), so a check this loose still catches every change.
     */
    public static final long EXPIRY_PRECISION_MS = 50;

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> READ = RedisScript.of("""
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local out = { string.format('%.0f', now) }
            for _, key in ipairs(KEYS) do
              local kind = redis.call('TYPE', key)['ok']
              local content = {}
              if kind == 'zset' then
                content = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
              elseif kind == 'hash' then
                content = redis.call('HGETALL', key)
              end
              local at = redis.pcall('PEXPIRETIME', key)
              if type(at) == 'table' then
                -- Redis 6: the clock of this moment, not of the script's start (the DUMPs take time).
                local pttl = redis.call('PTTL', key)
                local c = redis.call('TIME')
                if pttl >= 0 then at = tonumber(c[1]) * 1000 + math.floor(tonumber(c[2]) / 1000) + pttl else at = pttl end
              end
              local dump = redis.call('DUMP', key)
              local hex = ''
              if dump then
                hex = (string.gsub(dump, '.', function(c) return string.format('%02x', string.byte(c)) end))
              end
              out[#out + 1] = { kind, content, at, hex }
            end
            return out
            """, List.class);

    /** Reads the keys of one semaphore. */
    public static ScriptSnapshot take(StringRedisTemplate redis, SemaphoreKeys keys) {
        List<?> reply = redis.execute(READ, keys.all());
        Objects.requireNonNull(reply, "no reply to the snapshot script");
        long now = Long.parseLong((String) reply.get(0));
        List<Map<String, String>> contents = new ArrayList<>();
        Map<String, Long> expireAt = new LinkedHashMap<>();
        Map<String, String> dumps = new LinkedHashMap<>();
        for (int i = 0; i < keys.all().size(); i++) {
            List<?> entry = (List<?>) reply.get(i + 1);
            List<?> flat = (List<?>) entry.get(1);
            Map<String, String> content = new LinkedHashMap<>();
            for (int j = 0; j + 1 < flat.size(); j += 2) {
                content.put((String) flat.get(j), (String) flat.get(j + 1));
            }
            contents.add(content);
            String key = keys.all().get(i);
            expireAt.put(key, ((Number) entry.get(2)).longValue());
            dumps.put(key, entry.get(3) == null ? "" : (String) entry.get(3));
        }
        Map<String, Long> deadlines = scores(contents.get(0));
        Map<String, Long> queue = scores(contents.get(2));
        Map<String, Long> holders = new LinkedHashMap<>();
        Map<String, Long> queueDeadline = new LinkedHashMap<>();
        StateHash.splitDeadlines(deadlines, queue, holders, queueDeadline);
        Map<String, String> state = new LinkedHashMap<>();
        Map<String, String> info = new LinkedHashMap<>();
        StateHash.split(contents.get(1), state, info);
        boolean capped = contents.size() > 3;
        return new ScriptSnapshot(now, holders, state, queue, queueDeadline, info, expireAt, dumps,
                capped ? List.copyOf(contents.get(3).keySet()) : List.of(), capped ? scores(contents.get(4)) : Map.of());
    }

    public static ScriptSnapshot take(RedisConnectionFactory factory, SemaphoreKeys keys) {
        return take(new StringRedisTemplate(factory), keys);
    }

    private static Map<String, Long> scores(Map<String, String> raw) {
        Map<String, Long> scores = new LinkedHashMap<>();
        // (+inf, the score of the deadlines key's sentinel, as the largest.)
        raw.forEach((id, score) -> scores.put(id, score.endsWith("inf") ? Long.MAX_VALUE
                : new BigDecimal(score).longValue()));
        return scores;
    }

    /** @return the parsed info of id, or null when absent or malformed */
    public Info infoOf(String id) {
        String value = info.get(id);
        if (value == null) {
            return null;
        }
        Matcher m = INFO.matcher(value);
        if (!m.matches()) {
            return null;
        }
        return new Info(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                Long.parseLong(m.group(4)), m.group(5), m.group(6));
    }

    /** @return whether the info record of {@code id} names process {@code pid} as its owner (host/pid/thread) */
    public boolean ownedBy(String id, long pid) {
        String record = info.get(id);
        return record != null && record.contains("/" + pid + "/");
    }

    /** @return whether these are the keys of a capped semaphore (five keys) */
    public boolean capped() {
        return expireAt.size() > 3;
    }

    /** @return the key that a capped semaphore's member {@code "<key> <id>"} names */
    public static String keyOf(String member) {
        return member.substring(0, member.indexOf(' '));
    }

    /** @return key -> its counters, of every key of a capped semaphore that has a field (none when idle) */
    public Map<String, KeyCounters> keyCounters() {
        Map<String, KeyCounters> counters = new TreeMap<>();
        state.forEach((field, value) -> {
            if (field.startsWith("k:")) {
                String[] p = value.split(" ");
                counters.put(field.substring(2), new KeyCounters(Integer.parseInt(p[0]), Integer.parseInt(p[1]), p[2],
                        Integer.parseInt(p[3])));
            }
        });
        return counters;
    }

    /** @return the runtime limit set in the state hash, or null when none is set */
    public Integer override() {
        String override = state.get("override");
        return override == null ? null : Integer.valueOf(override);
    }

    /** @return the waiter served next, or null when nobody waits */
    public String head() {
        return queue.isEmpty() ? null : queue.keySet().iterator().next();
    }

    /** @return the used counter in the state hash (0 when there is none) */
    public int used() {
        String used = state.get("used");
        return used == null ? 0 : new BigDecimal(used).intValueExact();
    }

    /** @return the sum of the counts recorded for the holders (-1 counted for a holder without info) */
    public int heldCount() {
        int sum = 0;
        for (String id : holders.keySet()) {
            Info r = infoOf(id);
            sum += r == null ? 1 : r.count();
        }
        return sum;
    }

    /** @return whether nothing of the semaphore is left in Redis */
    public boolean empty() {
        return dumps.values().stream().allMatch(String::isEmpty);
    }

    /**
     * @param limit the limit every call used, or 0 not to check used <= limit
     * @return what breaks I1, I2 or I4 (empty when they hold)
     */
    public List<String> violations(int limit) {
        List<String> problems = new ArrayList<>();
        // I1: used = the sum of the holders' counts.
        int sum = 0;
        for (String id : holders.keySet()) {
            Info r = infoOf(id);
            if (r == null) {
                problems.add("holder " + id + " has no (parsable) info: " + info.get(id));
                continue;
            }
            if (r.token() <= 0) {
                problems.add("holder " + id + " has token " + r.token());
            }
            if (r.count() < 1) {
                problems.add("holder " + id + " has count " + r.count());
            }
            sum += r.count();
        }
        if (used() != sum) {
            problems.add("used = " + used() + " but the holders' counts add up to " + sum);
        }
        if (limit > 0 && sum > limit) {
            problems.add("holders hold " + sum + " permits, over the limit " + limit);
        }
        // I2: a record for every holder and waiter, none orphaned; no id both; every waiter has its deadline.
        for (String id : queue.keySet()) {
            Info r = infoOf(id);
            if (r == null) {
                problems.add("waiter " + id + " has no (parsable) info: " + info.get(id));
            } else if (r.token() != 0) {
                problems.add("waiter " + id + " has token " + r.token() + " in its info");
            }
            if (holders.containsKey(id)) {
                problems.add(id + " is both a holder and a waiter");
            }
        }
        if (!queue.keySet().equals(queueDeadline.keySet())) {
            problems.add("queue " + queue.keySet() + " and the waiters' deadlines " + queueDeadline.keySet()
                    + " differ");
        }
        Set<String> known = new HashSet<>(holders.keySet());
        known.addAll(queue.keySet());
        for (String id : info.keySet()) {
            if (!known.contains(id)) {
                problems.add("orphan info " + id + " = " + info.get(id));
            }
        }
        // I4: every key expires, and not before any deadline the semaphore holds.
        long latest = 0;
        for (long deadline : holders.values()) {
            latest = Math.max(latest, deadline);
        }
        for (long deadline : queueDeadline.values()) {
            latest = Math.max(latest, deadline);
        }
        // I6: the state key outlives the others, without a TTL, exactly while an override is set.
        String stateKey = new ArrayList<>(expireAt.keySet()).get(1);
        // (runtime limits of a capped semaphore's keys keep it too, and a runtime rate: R4)
        boolean kept = override() != null || state.containsKey("keyOverrides") || state.containsKey("rover");
        if (kept && expireAt.get(stateKey) != -1) {
            problems.add("the state key has a TTL although an override is set: " + expireAt.get(stateKey));
        }
        for (Map.Entry<String, Long> key : expireAt.entrySet()) {
            long at = key.getValue();
            if (at == -1 && key.getKey().equals(stateKey) && kept) {
                continue;
            }
            if (at == -1) {
                problems.add(key.getKey() + " has no TTL");
            } else if (at >= 0 && at < latest) {
                problems.add(key.getKey() + " expires at " + at + ", before the deadline " + latest + " it holds");
            }
        }
        return problems;
    }

    /**
     * What breaks the invariants of a capped semaphore's two levels ({@code _keys.lua}), on top of
     * {@link #violations(int) those of the cap}: K1 (a key's used is the sum of its holders'
     * counts), K2 (a key's waiters, its heads entries and its queue members agree), K3 (a key is in
     * ready iff its head fits its own limit, scored by its used), K4 (the first of ready does not
     * fit the cap), and no field left by an idle key.
     *
     * @param limit    the cap every call used, or 0 not to check the cap's used against it (nor K4)
     * @param keyLimit the limit of every key every call used, or 0 not to check a key's used against it (nor K3)
     * @return the problems (empty when they hold); of an uncapped semaphore, those of {@link #violations(int)}
     */
    public List<String> violations(int limit, int keyLimit) {
        List<String> problems = violations(limit);
        if (!capped()) {
            return problems;
        }
        Map<String, KeyCounters> counters = keyCounters();
        Map<String, Integer> usedOf = new TreeMap<>();
        holders.keySet().forEach(member -> {
            Info r = infoOf(member);
            usedOf.merge(keyOf(member), r == null ? 0 : r.count(), Integer::sum);
        });
        Map<String, Integer> waitersOf = new TreeMap<>();
        queue.keySet().forEach(member -> waitersOf.merge(keyOf(member), 1, Integer::sum));
        Map<String, Integer> headsOf = new TreeMap<>();
        Map<String, String[]> firstHead = new TreeMap<>();
        for (String entry : heads) {
            String[] p = entry.split(" ");
            Long ticket = queue.get(p[0] + " " + p[2]);
            if (ticket == null || ticket != Long.parseLong(p[1])) {
                problems.add("K2: heads entry " + entry + " but the queue has " + p[0] + " " + p[2] + " at " + ticket);
            }
            headsOf.merge(p[0], 1, Integer::sum);
            firstHead.putIfAbsent(p[0], p);
        }
        Map<String, String> readyOf = new TreeMap<>();
        ready.keySet().forEach(entry -> {
            String[] p = entry.split(" ");
            if (readyOf.put(p[1], p[0]) != null) {
                problems.add("K3: key " + p[1] + " is in ready more than once: " + ready.keySet());
            }
        });
        Set<String> keys = new TreeSet<>(counters.keySet());
        keys.addAll(usedOf.keySet());
        keys.addAll(waitersOf.keySet());
        keys.addAll(headsOf.keySet());
        keys.addAll(readyOf.keySet());
        for (String key : keys) {
            KeyCounters c = counters.getOrDefault(key, new KeyCounters(0, 0, "-", 0));
            int used = usedOf.getOrDefault(key, 0);
            int waiters = waitersOf.getOrDefault(key, 0);
            if (c.used() != used) {
                problems.add("K1: key " + key + " has used " + c.used() + " but its holders' counts add up to " + used);
            }
            int keyLimitNow = c.override() > 0 ? c.override() : keyLimit;
            if (keyLimit > 0 && used > keyLimitNow) {
                problems.add("key " + key + " holds " + used + " permits, over its limit " + keyLimitNow);
            }
            if (c.waiters() != waiters || headsOf.getOrDefault(key, 0) != waiters) {
                problems.add("K2: key " + key + " counts " + c.waiters() + " waiters, the queue has " + waiters
                        + ", heads " + headsOf.getOrDefault(key, 0));
            }
            if (counters.containsKey(key) && c.used() == 0 && c.waiters() == 0 && c.override() == 0) {
                problems.add("the idle key " + key + " left its field behind");
            }
            String[] head = firstHead.get(key);
            String inReady = readyOf.get(key);
            if (keyLimit > 0) {
                Info r = head == null ? null : infoOf(key + " " + head[2]);
                String fits = r != null && used + r.count() <= keyLimitNow ? head[1] : null;
                // the field names the head it is in ready with: "<ticket>.<id>"
                if (!Objects.equals(inReady, fits)
                        || !Objects.equals(c.ready(), fits == null ? "-" : fits + "." + head[2])) {
                    problems.add("K3: key " + key + " (used " + used + ", head " + (head == null ? null
                            : String.join(" ", head)) + ") is in ready as " + inReady + ", its field says "
                            + c.ready());
                }
            }
            Long score = inReady == null ? null : ready.get(inReady + " " + key);
            if (score != null && score != used) {
                problems.add("K3: key " + key + " is in ready with score " + score + " but holds " + used);
            }
        }
        if (limit > 0 && override() == null && !ready.isEmpty()) {
            String[] first = ready.keySet().iterator().next().split(" ");
            String[] head = firstHead.get(first[1]);
            Info r = head == null ? null : infoOf(first[1] + " " + head[2]);
            if (r != null && used() + r.count() <= limit) {
                problems.add("K4: the first of ready, key " + first[1] + " (its head asks " + r.count()
                        + "), fits the cap: used " + used() + " of " + limit);
            }
        }
        return problems;
    }

    @Override
    public String toString() {
        return "ScriptSnapshot[now=" + nowMs + ", holders=" + relative(holders) + ", state=" + state + ", queue="
                + queue.keySet() + ", queueDeadline=" + relative(queueDeadline) + ", info=" + info + ", expireAt="
                + relative(expireAt) + (capped() ? ", heads=" + heads + ", ready=" + ready : "") + "]";
    }

    private Map<String, String> relative(Map<String, Long> deadlines) {
        Map<String, String> shown = new LinkedHashMap<>();
        deadlines.forEach((id, at) -> shown.put(id, at < 0 ? String.valueOf(at) : "now+" + (at - nowMs) + "ms"));
        return shown;
    }
}
