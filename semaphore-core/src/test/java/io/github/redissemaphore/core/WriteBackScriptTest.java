package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * acquire.lua's write-back (mode 4, I7): the permits an instance granted on its own while Redis
 * could not be reached are written back as holders whatever the limit, and nothing more is granted
 * until enough of them are gone. A seeded random walk of normal acquires (queued or not), write-backs,
 * releases and renewals, checking after every step:
 * <ul>
 * <li>the structural invariants of every script ({@link ScriptSnapshot#violations}: {@code used} is the
 *     sum of the holders' counts, no orphan records, queue and deadlines agree);</li>
 * <li>a write-back is always granted, at once, and never queued; a resent one counts once;</li>
 * <li>a normal grant (by acquire, or by the queue on a release) happens only when it fits under the
 *     limit: above the limit, the holders only drain.</li>
 * </ul>
 */
@RedisTest
class WriteBackScriptTest {

    private static final int LIMIT = 3;
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration HEARTBEAT = Duration.ofSeconds(60);

    @Test
    void writeBacksGoOverTheLimitAndNothingElseIsGrantedUntilTheyDrain(RedisServer server) {
        long seed = Long.getLong("writeback.seed", System.nanoTime());
        Random random = new Random(seed);
        RedisConnectionFactory factory = server.connectionFactory(RawScripts.TIMEOUT);
        RawScripts scripts = new RawScripts(factory);
        StringRedisTemplate redis = new StringRedisTemplate(factory);
        String inbox = server.keyPrefix() + ":inbox:nobody";
        for (int walk = 0; walk < 20; walk++) {
            SemaphoreKeys keys = SemaphoreKeys.of(server.keyPrefix(), "write-back-" + seed + "-" + walk);
            Map<String, Integer> holders = new LinkedHashMap<>();
            List<String> waiting = new ArrayList<>();
            int ids = 0;
            for (int step = 0; step < 150; step++) {
                String where = "seed " + seed + " walk " + walk + " step " + step;
                ScriptSnapshot before = ScriptSnapshot.take(redis, keys);
                int choice = random.nextInt(10);
                if (choice < 3) {
                    String id = "w" + ids++;
                    int count = 1 + random.nextInt(LIMIT);
                    Acquired reply = scripts.writeBack(keys, LIMIT, id, count, LEASE, HEARTBEAT, inbox, "o");
                    assertThat(reply.status()).as(where + ": a write-back").isEqualTo(Acquired.Status.GRANTED);
                    assertThat(reply.token()).as(where).isPositive();
                    holders.put(id, count);
                    if (random.nextBoolean()) {
                        // Resent (a reconnect): counted once.
                        Acquired again = scripts.writeBack(keys, LIMIT, id, count, LEASE, HEARTBEAT, inbox, "o");
                        assertThat(again.token()).as(where + ": a resent write-back").isEqualTo(reply.token());
                    }
                } else if (choice < 6) {
                    String id = "a" + ids++;
                    int count = 1 + random.nextInt(LIMIT);
                    boolean wait = random.nextBoolean();
                    Acquired reply = scripts.acquire(keys, LIMIT, id, count, LEASE, wait, true, HEARTBEAT, inbox, "o");
                    if (reply.status() == Acquired.Status.GRANTED) {
                        assertThat(before.used() + count).as(where + ": a grant fits under the limit")
                                .isLessThanOrEqualTo(LIMIT);
                        holders.put(id, count);
                    } else if (reply.status() == Acquired.Status.QUEUED) {
                        waiting.add(id);
                    }
                } else if (!holders.isEmpty()) {
                    String id = new ArrayList<>(holders.keySet()).get(random.nextInt(holders.size()));
                    scripts.release(keys, LIMIT, id);
                    holders.remove(id);
                }
                ScriptSnapshot after = ScriptSnapshot.take(redis, keys);
                assertThat(after.violations(0)).as(where + ": " + after).isEmpty();
                // Waiters granted by this step (by a release) fit under the limit too.
                int grantedFromQueue = 0;
                for (String id : List.copyOf(waiting)) {
                    ScriptSnapshot.Info info = after.infoOf(id);
                    if (info != null && info.token() > 0) {
                        grantedFromQueue += info.count();
                        holders.put(id, info.count());
                        waiting.remove(id);
                    } else if (info == null) {
                        waiting.remove(id);
                    }
                }
                if (grantedFromQueue > 0) {
                    assertThat(after.used()).as(where + ": the queue served under the limit").isLessThanOrEqualTo(LIMIT);
                }
                assertThat(after.used()).as(where + ": used is what the model holds")
                        .isEqualTo(holders.values().stream().mapToInt(Integer::intValue).sum());
            }
        }
    }
}
