package io.github.redissemaphore.sample.readme;

import io.github.redissemaphore.sample.readme.Page.Block;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.yaml.snakeyaml.Yaml;

/** A YAML block of a page flattened to property names, as Spring Boot reads YAML. */
final class YamlBlock {

    /** One leaf of the block: its property name, its value and (about) the line it is on. */
    record Entry(String name, Object value, int line) {
    }

    private YamlBlock() {
    }

    /** @throws RuntimeException (SnakeYAML's) when the block is not valid YAML */
    static List<Entry> entries(Block block) {
        List<Entry> entries = new ArrayList<>();
        for (Object document : new Yaml().loadAll(block.text())) {
            flatten("", document, entries, block);
        }
        return entries;
    }

    private static void flatten(String prefix, Object value, List<Entry> entries, Block block) {
        if (value instanceof Map<?, ?> map && !map.isEmpty()) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                // a dotted key is a path; a key in brackets is one element
                String key = String.valueOf(entry.getKey());
                flatten(prefix.isEmpty() ? key : key.startsWith("[") ? prefix + key : prefix + "." + key,
                        entry.getValue(), entries, block);
            }
        } else if (!prefix.isEmpty()) {
            entries.add(new Entry(prefix, value, lineOf(prefix, block, entries)));
        }
    }

    /** The first line at or after the previous entry's that starts with the name's last key. */
    private static int lineOf(String name, Block block, List<Entry> before) {
        String last = name.replaceFirst(".*[.\\]]", "");
        int from = before.isEmpty() ? 0 : before.get(before.size() - 1).line() - block.firstLine();
        for (int i = from; i < block.lines().size(); i++) {
            if (block.lines().get(i).strip().startsWith(last + ":")) {
                return block.firstLine() + i;
            }
        }
        return block.firstLine();
    }
}
