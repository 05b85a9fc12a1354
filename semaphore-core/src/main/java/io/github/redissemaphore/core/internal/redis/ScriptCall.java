package io.github.redissemaphore.core.internal.redis;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One call of one script: which script, its ARGV, and how its reply reads. Each script has one
 * type implementing this (a record of its arguments, with its reply as a nested record of named
 * fields), so changing a script's arguments or reply changes that one type.
 *
 * @param <T> the parsed reply
 */
public interface ScriptCall<T> {

    /** @return the script, loaded once */
    @SuppressWarnings("rawtypes")
    RedisScript<List> script();

    /** @return ARGV, in the order the script reads it */
    List<String> args();

    /** @return the reply, read by name */
    T parse(Reply reply);

    /**
     * @return the lease this reply makes held (a grant, a claim confirmed as a full lease), which
     *         replicas must acknowledge on a semaphore that waits for them ({@link GrantRunner});
     *         null when the reply makes nothing held
     */
    default @Nullable Held held(T reply) {
        return null;
    }

    /**
     * A lease a reply made held.
     *
     * @param id    the lease
     * @param lease how long it lasts without a renewal
     */
    record Held(String id, Duration lease) {
    }

    /** @return a duration as the scripts take it: whole milliseconds */
    static String millis(java.time.Duration duration) {
        return String.valueOf(duration.toMillis());
    }

    /** @return a flag as the scripts take it */
    static String flag(boolean value) {
        return value ? "1" : "0";
    }
}
