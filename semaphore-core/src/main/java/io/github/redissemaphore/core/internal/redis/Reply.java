package io.github.redissemaphore.core.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A script's raw reply: the {@link Usage} figures every script returns first, then the script's
 * own entries. Only the script types read it, by position; everyone else reads their named fields.
 */
public final class Reply {

    /**
     * Index of a script's own first entry: after used, limit, waiters, server time, earliest lease
     * end, the configured limit of the previous call and the override.
     */
    private static final int OWN = 7;

    private final List<Object> values;

    Reply(List<Object> values) {
        this.values = values;
    }

    /** @return the figures every script returns */
    Usage usage() {
        return new Usage((int) at(0), (int) at(1), (int) at(2), at(3), at(4), (int) at(5), (int) at(6));
    }

    /** @return the script's own entry {@code index} (from 0), a number */
    long number(int index) {
        return at(OWN + index);
    }

    /** @return the script's own entry {@code index} (from 0), a list of entries */
    List<?> list(int index) {
        return (List<?>) values.get(OWN + index);
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
