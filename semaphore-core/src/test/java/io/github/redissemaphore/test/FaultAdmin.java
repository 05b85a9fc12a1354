package io.github.redissemaphore.test;

import java.util.ArrayList;
import java.util.List;

/**
 * Raw admin commands on a test's Redis server for the fault tests ({@code SCRIPT FLUSH}, reads of
 * the semaphore keys), on a short-lived plain socket of their own like the other admin calls of
 * {@link RedisServer}: no Lettuce client, no script, nothing in the command statistics but the
 * command itself. Like every admin call, one sent during a {@code CLIENT PAUSE} waits for its end.
 */
public final class FaultAdmin {

    private FaultAdmin() {
    }

    /** @return the reply of {@code command} (see {@link RespConnection} for the reply types) */
    public static Object call(RedisServer server, String... command) {
        return server.admin(command);
    }

    /** Empties the server's script cache ({@code SCRIPT FLUSH SYNC}). */
    public static void scriptFlush(RedisServer server) {
        call(server, "SCRIPT", "FLUSH", "SYNC");
    }

    /** @return {@code ZCARD key} */
    public static long zcard(RedisServer server, String key) {
        return (Long) call(server, "ZCARD", key);
    }

    /**
     * @return the members of the sorted set {@code key}, lowest score first, but for the sentinel
     *         {@code ''} that keeps a semaphore's deadlines key while nobody holds or waits
     */
    public static List<String> zmembers(RedisServer server, String key) {
        List<String> members = new ArrayList<>();
        for (Object member : (List<?>) call(server, "ZRANGE", key, "0", "-1")) {
            if (!"".equals(member)) {
                members.add((String) member);
            }
        }
        return members;
    }

    /** @return {@code ZSCORE key member} as a number, or null when absent */
    public static Double zscore(RedisServer server, String key, String member) {
        Object score = call(server, "ZSCORE", key, member);
        return score == null ? null : Double.valueOf((String) score);
    }

    /** @return {@code HEXISTS key field} */
    public static boolean hexists(RedisServer server, String key, String field) {
        return (Long) call(server, "HEXISTS", key, field) == 1;
    }

    /** @return the {@code run_id} of the server process (changes with every restart) */
    public static String runId(RedisServer server) {
        return server.info("server").lines().filter(line -> line.startsWith("run_id:")).findFirst()
                .orElseThrow().substring("run_id:".length()).trim();
    }
}
