package io.github.redissemaphore.core;

import java.util.Map;

/**
 * Reads a semaphore's keys as the scripts write them, for the tests' snapshots: the state hash's
 * counters (fields named with a leading space, which no id can have) apart from the records of its
 * holders and waiters, and the deadlines sorted set apart into leases and waiters' heartbeats.
 */
final class StateHash {

    private StateHash() {
    }

    /**
     * Splits the state hash: counters go to {@code state} without their leading space, the
     * {@code limits} field as {@code limit} and {@code override}; every other field is a record.
     */
    static void split(Map<String, String> hash, Map<String, String> state, Map<String, String> records) {
        hash.forEach((field, value) -> {
            if (field.equals(" limits")) {
                // "<configured limit of the last call>[ <override, 0: none> <most a waiter asks>]": shown
                // as the fields limit and override
                String[] limits = value.split(" ");
                state.put("limit", limits[0]);
                // a capped semaphore's fourth number: how many of its keys have a runtime limit
                if (limits.length > 3 && !limits[3].equals("0")) {
                    state.put("keyOverrides", limits[3]);
                }
                if (limits.length > 1 && !limits[1].equals("0")) {
                    state.put("override", limits[1]);
                }
            } else if (field.startsWith(" ")) {
                state.put(field.substring(1), value);
            } else {
                records.put(field, value);
            }
        });
    }

    /**
     * Splits the deadlines key: an id in the queue is a waiter (its heartbeat), any other a holder
     * (its lease). The sentinel '' (at +inf), which keeps the key while nobody holds or waits, is no entry.
     */
    static void splitDeadlines(Map<String, Long> deadlines, Map<String, ?> queue, Map<String, Long> holders,
                               Map<String, Long> waiters) {
        deadlines.forEach((id, at) -> {
            if (!id.isEmpty()) {
                (queue.containsKey(id) ? waiters : holders).put(id, at);
            }
        });
    }
}
