package io.github.redissemaphore.core.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The Redis keys of one semaphore. All carry the hash tag {@code {name}} so they live in one
 * Redis Cluster slot and one script can touch them all.
 *
 * @param name    the semaphore name
 * @param all     deadlines, state, queue: the KEYS of every script, in order
 * @param encoded the same keys in UTF-8, encoded once
 */
public record SemaphoreKeys(String name, List<String> all, List<byte[]> encoded) {

    /** @return the keys of {@code name} under {@code prefix} */
    public static SemaphoreKeys of(String prefix, String name) {
        String base = prefix + ":{" + name + "}:";
        List<String> all = List.of(base + "deadlines", base + "state", base + "queue");
        return new SemaphoreKeys(name, all, all.stream().map(key -> key.getBytes(StandardCharsets.UTF_8)).toList());
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
        return base() + "inbox:" + clientId;
    }

    /** @return what every key of the semaphore starts with: {@code <prefix>:{<name>}:} */
    private String base() {
        String deadlines = all.get(0);
        return deadlines.substring(0, deadlines.length() - "deadlines".length());
    }
}
