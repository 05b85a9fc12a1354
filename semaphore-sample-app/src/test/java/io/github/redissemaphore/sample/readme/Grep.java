package io.github.redissemaphore.sample.readme;

import java.util.List;
import java.util.regex.Pattern;

/**
 * A {@code grep} command line of a page, applied in Java to a text: the options the pages may
 * use ({@code -E}, {@code -F}, {@code -i}, {@code -v}, {@code -e}) and a basic or extended regular
 * expression. Anything else is refused, so the check never silently differs from what grep does.
 */
final class Grep {

    private final Pattern pattern;
    private final boolean invert;

    private Grep(Pattern pattern, boolean invert) {
        this.pattern = pattern;
        this.invert = invert;
    }

    /** @param words {@code grep}, its options and its pattern */
    static Grep of(List<String> words) {
        boolean extended = false;
        boolean fixed = false;
        boolean invert = false;
        int flags = 0;
        String expression = null;
        for (int i = 1; i < words.size(); i++) {
            String word = words.get(i);
            if (expression != null || !word.startsWith("-")) {
                if (expression != null) {
                    throw new IllegalArgumentException(
                            "grep reads a file here (" + word + "), not the output before |");
                }
                expression = word;
                continue;
            }
            for (char option : word.substring(1).toCharArray()) {
                switch (option) {
                    case 'E' -> extended = true;
                    case 'F' -> fixed = true;
                    case 'i' -> flags |= Pattern.CASE_INSENSITIVE;
                    case 'v' -> invert = true;
                    case 'e' -> expression = words.get(++i);
                    default -> throw new IllegalArgumentException(
                            "grep option -" + option + " is not supported by this check");
                }
            }
        }
        if (expression == null) {
            throw new IllegalArgumentException("grep without a pattern: " + words);
        }
        String regex = fixed ? Pattern.quote(expression) : extended ? expression : fromBasic(expression);
        return new Grep(Pattern.compile(regex, flags), invert);
    }

    /** @return the lines of {@code text} that grep prints */
    List<String> lines(String text) {
        return text.lines().filter(line -> pattern.matcher(line).find() != invert).toList();
    }

    /** A basic regular expression: {@code \( \) \{ \} \| \+ \?} are operators, the bare characters literals. */
    private static String fromBasic(String basic) {
        StringBuilder java = new StringBuilder();
        for (int i = 0; i < basic.length(); i++) {
            char c = basic.charAt(i);
            if (c == '\\' && i + 1 < basic.length() && "(){}|+?".indexOf(basic.charAt(i + 1)) >= 0) {
                java.append(basic.charAt(++i));
            } else if ("(){}|+?".indexOf(c) >= 0) {
                java.append('\\').append(c);
            } else {
                java.append(c);
                if (c == '\\' && i + 1 < basic.length()) {
                    java.append(basic.charAt(++i));
                }
            }
        }
        return java.toString();
    }
}
