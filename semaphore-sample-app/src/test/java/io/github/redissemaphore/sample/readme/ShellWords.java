package io.github.redissemaphore.sample.readme;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a command line of a page into words as a POSIX shell would for the simple cases the
 * pages use: blanks separate words, single and double quotes group them, and a pipe ends the
 * command. Placeholders such as {@code <port from the first one's WARN line>} are one word.
 */
final class ShellWords {

    /** A command and, after a {@code |}, the command its output is piped into (empty when none). */
    record Pipeline(List<String> command, List<String> pipedInto) {
    }

    private ShellWords() {
    }

    static Pipeline split(String line) {
        List<List<String>> commands = new ArrayList<>(List.of(new ArrayList<>()));
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        int placeholderDepth = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (placeholderDepth > 0
                    || c == '<' && i + 1 < line.length() && Character.isLetter(line.charAt(i + 1))) {
                placeholderDepth += c == '<' ? 1 : c == '>' ? -1 : 0;
                word.append(c);
                inWord = true;
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (Character.isWhitespace(c) || c == '|') {
                if (inWord) {
                    commands.get(commands.size() - 1).add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
                if (c == '|') {
                    commands.add(new ArrayList<>());
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            commands.get(commands.size() - 1).add(word.toString());
        }
        List<String> pipedInto = commands.size() > 1 ? List.copyOf(commands.get(1)) : List.of();
        return new Pipeline(List.copyOf(commands.get(0)), pipedInto);
    }
}
