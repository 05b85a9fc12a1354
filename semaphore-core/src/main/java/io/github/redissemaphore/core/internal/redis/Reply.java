package io.github.redissemaphore.core.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A script's raw reply: the {@link Usage} figures every script returns first, then the script's
 * own entries. Only the script types read it, by position; everyone else reads their named fields.
 */
public final class Reply {

    /**
     * Index of a script's own first entry: after used, waiters, server time, earliest deadline and
     * the limits (0, or the text "previous override").
     */
    private static final int OWN = 5;

    private final List<Object> values;

    Reply(List<Object> values) {
        this.values = values;
    }

    /**
     * @param configured the limit the call carried (the caller's configured permits)
     * @return the figures every script returns
     */
    Usage usage(int configured) {
        int previous = configured;
        int override = 0;
        if (!(values.get(4) instanceof Number)) {
            // "<configured limit of the previous call> <override>", each 0 when none
            String limits = text(values.get(4));
            int space = limits.indexOf(' ');
            previous = Integer.parseInt(limits.substring(0, space));
            override = Integer.parseInt(limits.substring(space + 1));
        }
        return new Usage((int) at(0), override > 0 ? override : configured, (int) at(1), at(2), at(3), previous,
                override);
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
