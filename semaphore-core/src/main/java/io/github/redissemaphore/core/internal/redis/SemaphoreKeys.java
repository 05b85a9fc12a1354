package io.github.redissemaphore.core.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The Redis keys of one semaphore. All carry the hash tag {@code {name}} so they live in one
 * Redis Cluster slot and one script can touch them all. The keys of a capped semaphore (one with
 * {@link io.github.redissemaphore.core.SemaphoreSettings#totalPermits()}) are those of its base
 * name, shared by all its keys ({@code {exports}} for {@code "exports:acme"}), with two more
 * (heads, ready: see {@code _keys.lua}); the script calls then carry the cap and the key in ARGV 1.
 *
 * @param name         the semaphore name ({@code "exports:acme"}; of a call about a cap as a whole, its base name)
 * @param all          deadlines, state, queue (and heads, ready when capped; rate with a rate): the KEYS of every
 *                     script, in order
 * @param encoded      the same keys in UTF-8, encoded once
 * @param totalPermits the cap of a capped semaphore ({@code total-permits}), else 0: {@code TOTAL_TEXT} in the
 *                     scripts
 * @param key          the key within a capped semaphore; null for a call about the cap as a whole, or uncapped
 * @param rate         of a semaphore with a rate ({@link #withRate}), {@code "<rate-limit> <rate-period ms>"},
 *                     which every call carries after its limit in ARGV 1 ({@code RATE_TEXT} in the scripts);
 *                     else empty
 */
public record SemaphoreKeys(String name, List<String> all, List<byte[]> encoded, int totalPermits,
                            @Nullable String key, String rate) {

    /** @return the keys of {@code name} under {@code prefix} */
    public static SemaphoreKeys of(String prefix, String name) {
        return make(name, prefix + ":{" + name + "}:", List.of("deadlines", "state", "queue"), 0, null);
    }

    /**
     * @return the key of the instances using {@code baseName} (presence.lua), in the slot of its
     *         keys, capped or not (for a keyed semaphore: its base name's, one key for all its keys)
     */
    public static SemaphoreKeys instances(String prefix, String baseName) {
        return make(baseName, prefix + ":{" + baseName + "}:", List.of("instances"), 0, null);
    }

    /**
     * @param key the key of one semaphore of the family ({@code "acme"}); null for the cap as a whole
     * @return the keys of the capped semaphore {@code baseName} under {@code prefix}, as a call
     *         about {@code key} uses them ({@code :capped:} keeps them apart from those of a
     *         semaphore of that very name without a cap, whose data has another shape)
     */
    public static SemaphoreKeys capped(String prefix, String baseName, @Nullable String key, int totalPermits) {
        return make(key == null ? baseName : baseName + ":" + key, prefix + ":{" + baseName + "}:capped:",
                List.of("deadlines", "state", "queue", "heads", "ready"), totalPermits, key);
    }

    private static SemaphoreKeys make(String name, String base, List<String> suffixes, int totalPermits,
                                      @Nullable String key) {
        List<String> all = suffixes.stream().map(suffix -> base + suffix).toList();
        return new SemaphoreKeys(name, all, all.stream().map(k -> k.getBytes(StandardCharsets.UTF_8)).toList(),
                totalPermits, key, "");
    }

    /**
     * @param rateLimit  grants per {@code ratePeriod} ({@code rate-limit}); 0: no rate, these keys as they are
     * @param ratePeriod the window of the rate, whole milliseconds
     * @return these keys with the rate's window, a fourth key in the same slot ({@code _rate.lua}),
     *         and the rate carried by every call
     * @throws IllegalArgumentException for a capped semaphore, whose keys take no rate
     */
    public SemaphoreKeys withRate(int rateLimit, Duration ratePeriod) {
        if (rateLimit == 0) {
            return this;
        }
        if (totalPermits > 0) {
            throw new IllegalArgumentException("A capped semaphore (totalPermits above 0) takes no rateLimit");
        }
        List<String> keys = new ArrayList<>(all);
        keys.add(base() + "rate");
        return new SemaphoreKeys(name, List.copyOf(keys),
                keys.stream().map(k -> k.getBytes(StandardCharsets.UTF_8)).toList(), totalPermits, key,
                rateLimit + " " + ratePeriod.toMillis());
    }

    /**
     * @return a call's ARGV as the scripts take it on these keys: as it is, or, capped, with ARGV 1
     *         (the caller's {@code limit}, its configured permits: each key's limit) made
     *         {@code "<totalPermits> <limit> <key>"}. The scripts call the limit of the state's
     *         counters {@code TOTAL_TEXT} (all of ARGV 1 without a cap, its first number with one)
     *         and a capped semaphore's {@code limit} {@code LIMIT_TEXT} (see {@code _names.lua})
     */
    List<String> argv(List<String> args) {
        if (!rate.isEmpty()) {
            List<String> rated = new ArrayList<>(args);
            rated.set(0, args.get(0) + " " + rate);
            return rated;
        }
        if (totalPermits == 0) {
            return args;
        }
        List<String> capped = new ArrayList<>(args);
        capped.set(0, totalPermits + " " + args.get(0) + (key == null ? "" : " " + key));
        return capped;
    }

    /** @return the keys as the scripts get them, encoded once per semaphore (a fresh array, safe to hand out) */
    byte[][] bytes() {
        return encoded.toArray(new byte[0][]);
    }

    /**
     * @return the key a grant that waits for replicas writes last, so the {@code WAIT} after it
     *         covers the grant even when the script itself changed nothing (a string with a short
     *         TTL; in the semaphore's slot)
     */
    byte[] replicationMarker() {
        return (base() + "replicated").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @return the pub/sub channel on which the JVM with that client id hears of grants of every
     *         semaphore: published with {@code PUBLISH} (standalone, Sentinel, Redis 6 clusters)
     */
    public static String inboxChannel(String prefix, String clientId) {
        return prefix + ":inbox:" + clientId;
    }

    /**
     * @return the sharded pub/sub channel on which the JVM with that client id hears of grants of
     *         this semaphore: it carries the hash tag, so it lives in the semaphore's slot and the
     *         scripts publish to it with {@code SPUBLISH} (Redis Cluster 7+)
     */
    public String channel(String clientId) {
        // (The keys of a capped semaphore share the slot, each with its own channel: forgetting one key
        // must not unsubscribe the others.)
        return base() + "inbox:" + (key == null ? "" : key + ":") + clientId;
    }

    /** @return what every key of the semaphore starts with: {@code <prefix>:{<name>}:} */
    private String base() {
        String deadlines = all.get(0);
        return deadlines.substring(0, deadlines.length() - "deadlines".length());
    }
}
