package io.github.redissemaphore.core;

/**
 * The rules for semaphore names and key prefixes: 1..200 characters, no '{', '}', whitespace or
 * control characters. Braces are reserved for the Redis Cluster hash tag that keeps all keys of
 * one semaphore in one slot.
 */
public final class SemaphoreNames {

    /** Longest name. */
    public static final int MAX_LENGTH = 200;

    private SemaphoreNames() {
    }

    /**
     * @param argument what to call the value in the error message ("name", "keyPrefix", ...)
     * @return the value, when valid
     * @throws IllegalArgumentException naming the argument and the rule it breaks
     */
    public static String check(String argument, String value) {
        if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(argument + " must be 1 to " + MAX_LENGTH + " characters long, but was "
                    + (value == null ? "null" : value.length() + " characters"));
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '{' || c == '}' || Character.isWhitespace(c) || Character.isISOControl(c)
                    || Character.isSpaceChar(c)) {
                throw new IllegalArgumentException(argument + " must not contain '{', '}', whitespace or control"
                        + " characters, but '" + printable(value) + "' has one at index " + i);
            }
        }
        return value;
    }

    private static String printable(String value) {
        StringBuilder out = new StringBuilder();
        value.codePoints().forEach(cp -> {
            if (Character.isISOControl(cp)) {
                out.append(String.format("\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }
}
