package io.github.redissemaphore.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The queue's bound in {@code acquire.lua} (Q1..Q3), called script by script: seeded random walks
 * of many callers of three JVMs on an uncapped and a capped semaphore, each step checked against
 * the keys. After every step:
 * <ul>
 *   <li>at most {@code max-waiters} wait (a capped semaphore: on each key), and the invariants
 *       I1..I6 (K1.. for the cap) hold;</li>
 *   <li>a caller refused as {@link Acquired.Status#FULL} found the bound reached before its call,
 *       and left nothing of its own: no record, no deadline, no queue entry;</li>
 *   <li>a new caller that queued found room; a waiter that calls again (a heartbeat, a resent call)
 *       is never refused for the bound;</li>
 *   <li>waiters that leave (cancel, grant) make room for the next.</li>
 * </ul>
 * A walk's seed is printed with any failure: {@code -Dqueue-bound.seed=N} replays it.
 */
@RedisTest
class QueueBoundTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration HEARTBEAT = Duration.ofSeconds(30);
    private static final int STEPS = 400;

    private RawScripts commands;
    private StringRedisTemplate redis;
    private String prefix;
    private final AtomicInteger names = new AtomicInteger();

    @BeforeEach
    void connect(RedisServer server) {
        commands = new RawScripts(server.connectionFactory(RawScripts.TIMEOUT));
        redis = new StringRedisTemplate(server.connectionFactory());
        prefix = server.keyPrefix();
    }

    @Test
    void aSeededWalkOfManyCallersNeverQueuesMoreThanTheBoundOnAnUncappedSemaphore() {
        for (long seed : seeds()) {
            walk(seed, false);
        }
    }

    @Test
    void aSeededWalkOfManyCallersNeverQueuesMoreThanTheBoundOnEachKeyOfACappedSemaphore() {
        for (long seed : seeds()) {
            walk(seed, true);
        }
    }

    private static List<Long> seeds() {
        String replay = System.getProperty("queue-bound.seed");
        if (replay != null) {
            return List.of(Long.parseLong(replay));
        }
        long base = System.nanoTime();
        return List.of(base, base + 1, base + 2);
    }

    /** One semaphore of its own (capped: keys a and b), STEPS random calls, each checked. */
    private void walk(long seed, boolean capped) {
        Random random = new Random(seed);
        int limit = 1 + random.nextInt(2);
        int bound = 1 + random.nextInt(3);
        int total = limit + random.nextInt(2);
        String name = "bound-" + names.incrementAndGet();
        List<String> keyNames = capped ? List.of("a", "b") : List.of("");
        List<SemaphoreKeys> keys = new ArrayList<>();
        for (String key : keyNames) {
            keys.add(capped ? SemaphoreKeys.capped(prefix, name, key, total) : SemaphoreKeys.of(prefix, name));
        }
        String[] inboxes = {prefix + ":inbox:j1", prefix + ":inbox:j2", prefix + ":inbox:j3"};
        int ids = 0;
        String label = (capped ? "capped" : "uncapped") + " walk seed=" + seed + " (limit " + limit + ", bound "
                + bound + (capped ? ", total " + total : "") + ")";
        int full = 0;
        int queued = 0;
        for (int step = 0; step < STEPS; step++) {
            int k = random.nextInt(keys.size());
            SemaphoreKeys on = keys.get(k);
            String key = keyNames.get(k);
            ScriptSnapshot before = ScriptSnapshot.take(redis, on);
            List<String> waiting = membersOf(before.queue(), key, capped);
            List<String> holding = membersOf(before.holders(), key, capped);
            int op = random.nextInt(10);
            String at = label + " step " + step + " on key '" + key + "'";
            if (op < 5) {
                String id = "c" + ids++;
                String inbox = inboxes[random.nextInt(inboxes.length)];
                Acquired reply = commands.acquire(on, limit, id, 1, LEASE, random.nextBoolean(), HEARTBEAT, inbox,
                        "test", bound, Duration.ZERO);
                ScriptSnapshot after = ScriptSnapshot.take(redis, on);
                if (reply.status() == Acquired.Status.FULL) {
                    full++;
                    assertThat(waiting.size()).as("%s: %s refused as full with %s waiting", at, id, waiting)
                            .isGreaterThanOrEqualTo(bound);
                    assertThat(traceOf(after, id)).as("%s: what the refused %s left", at, id).isEmpty();
                } else if (reply.status() == Acquired.Status.QUEUED) {
                    queued++;
                    assertThat(waiting.size()).as("%s: %s queued with %s waiting", at, id, waiting).isLessThan(bound);
                    assertThat(reply.usage().waiters()).as("%s: the reply's waiters, its position", at)
                            .isEqualTo(waiting.size() + 1);
                } else {
                    assertThat(reply.status()).as(at).isEqualTo(Acquired.Status.GRANTED);
                }
            } else if (op < 6 && !waiting.isEmpty()) {
                // A waiter calls again: never refused for the bound.
                String id = bare(waiting.get(random.nextInt(waiting.size())), capped);
                Acquired reply = commands.acquire(on, limit, id, 1, LEASE, true, HEARTBEAT,
                        before.infoOf(member(id, key, capped)).inbox(), "test", bound, Duration.ZERO);
                assertThat(reply.status()).as("%s: waiter %s calling again", at, id)
                        .isIn(Acquired.Status.QUEUED, Acquired.Status.GRANTED);
            } else if (op < 8 && !holding.isEmpty()) {
                String member = holding.get(random.nextInt(holding.size()));
                commands.release(on, limit, bare(member, capped), 0, before.infoOf(member).inbox());
            } else if (!waiting.isEmpty()) {
                commands.cancel(on, limit, bare(waiting.get(random.nextInt(waiting.size())), capped), true);
            }
            ScriptSnapshot after = ScriptSnapshot.take(redis, on);
            List<String> violations = capped ? after.violations(total, limit) : after.violations(limit);
            assertThat(violations).as("%s: the invariants, %s", at, after).isEmpty();
            for (String each : keyNames) {
                assertThat(membersOf(after.queue(), each, capped)).as("%s: the waiters of key '%s'", at, each)
                        .hasSizeLessThanOrEqualTo(bound);
            }
        }
        System.out.printf("%s: %d queued, %d refused as full%n", label, queued, full);
        assertThat(full).as("%s: the walk reached the bound", label).isPositive();
        assertThat(queued).as("%s: the walk queued callers", label).isPositive();
        // Leave nothing: every waiter and holder goes.
        for (int k = 0; k < keys.size(); k++) {
            ScriptSnapshot last = ScriptSnapshot.take(redis, keys.get(k));
            for (String member : membersOf(last.queue(), keyNames.get(k), capped)) {
                commands.cancel(keys.get(k), limit, bare(member, capped), true);
            }
            ScriptSnapshot drained = ScriptSnapshot.take(redis, keys.get(k));
            for (String member : membersOf(drained.holders(), keyNames.get(k), capped)) {
                commands.release(keys.get(k), limit, bare(member, capped));
            }
        }
    }

    /** @return the members of {@code entries} on {@code key} (all when uncapped) */
    private static List<String> membersOf(Map<String, Long> entries, String key, boolean capped) {
        return entries.keySet().stream().filter(m -> !capped || ScriptSnapshot.keyOf(m).equals(key)).toList();
    }

    private static String bare(String member, boolean capped) {
        return capped ? member.substring(member.indexOf(' ') + 1) : member;
    }

    private static String member(String id, String key, boolean capped) {
        return capped ? key + " " + id : id;
    }

    /** @return every entry of the keys that names {@code id} */
    private static List<String> traceOf(ScriptSnapshot snapshot, String id) {
        List<String> found = new ArrayList<>();
        snapshot.holders().keySet().stream().filter(m -> m.endsWith(id) && bareIs(m, id)).forEach(found::add);
        snapshot.queue().keySet().stream().filter(m -> bareIs(m, id)).forEach(found::add);
        snapshot.info().keySet().stream().filter(m -> bareIs(m, id)).forEach(found::add);
        snapshot.heads().stream().filter(m -> m.endsWith(" " + id)).forEach(found::add);
        return found;
    }

    private static boolean bareIs(String member, String id) {
        return member.equals(id) || member.endsWith(" " + id);
    }
}
