package io.github.redissemaphore.core;

import io.github.redissemaphore.core.internal.redis.AcquireScript.Acquired;
import io.github.redissemaphore.core.internal.redis.RenewScript.Renewed;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sweep of {@code renew.lua} (S1, S2) on its own: a JVM's renew with a watermark ends exactly
 * its leases that it does not name and that are older than min(watermark, server time - 1 s),
 * hands their permits to the queue in the same call, and ends nothing else: not a named or spared
 * lease, not a newer one, not a waiter, not another JVM's; on a capped semaphore, only leases of
 * the key it renews, and both levels' counts follow.
 */
@RedisTest
class RenewSweepTest {

    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final Duration HEARTBEAT = Duration.ofMinutes(1);

    private RawScripts scripts;
    private String prefix;

    @BeforeEach
    void connect(RedisServer server) {
        scripts = new RawScripts(server.connectionFactory(RawScripts.TIMEOUT));
        prefix = server.keyPrefix();
    }

    private Acquired take(SemaphoreKeys keys, int limit, String id, boolean wait, String inbox) {
        return scripts.acquire(keys, limit, id, 1, LEASE, wait, true, HEARTBEAT, inbox, "sweep-test");
    }

    @Test
    void aSweepEndsExactlyTheUnnamedOlderLeasesOfItsJvmAndServesTheQueue() throws InterruptedException {
        SemaphoreKeys keys = SemaphoreKeys.of(prefix, "sweep");
        String x = prefix + ":inbox:x";
        String y = prefix + ":inbox:y";
        int limit = 5;
        long old1 = take(keys, limit, "old1", false, x).token();
        take(keys, limit, "old2", false, x);
        take(keys, limit, "old3", false, x);
        take(keys, limit, "oldY", false, y);
        Thread.sleep(1100);
        Acquired newer = take(keys, limit, "new1", false, x);
        assertThat(take(keys, limit, "wX", true, x).status()).isEqualTo(Acquired.Status.QUEUED);
        assertThat(take(keys, limit, "wY", true, y).status()).isEqualTo(Acquired.Status.QUEUED);

        // A watermark at old1's token: nothing of x is below it.
        Renewed none = scripts.renew(keys, limit, HEARTBEAT, x, List.of(), List.of(), old1);
        assertThat(none.swept()).isZero();
        assertThat(none.usage().used()).isEqualTo(5);

        // Far ahead: old2 and old3 end; old1 (renewed), new1 (granted within the last second) and
        // the waiter stay; the freed permits go to wX and wY, in ticket order.
        long ahead = newer.usage().serverMicros() + 10_000_000L;
        Renewed swept = scripts.renew(keys, limit, HEARTBEAT, x, List.of("old1"), List.of("wX"), ahead);
        assertThat(swept.swept()).isEqualTo(2);
        assertThat(swept.statuses()).containsExactly(old1);
        assertThat(swept.usage().used()).isEqualTo(5);
        assertThat(swept.usage().waiters()).isZero();

        Renewed after = scripts.renew(keys, limit, HEARTBEAT, x, List.of("old1", "old2", "old3", "new1", "wX"));
        assertThat(after.statuses().subList(0, 3)).containsExactly(old1, -1L, -1L);
        assertThat(after.statuses().get(3)).isEqualTo(newer.token());
        assertThat(after.statuses().get(4)).isPositive();
        Renewed ofY = scripts.renew(keys, limit, HEARTBEAT, y, List.of("oldY", "wY"));
        assertThat(ofY.statuses()).allMatch(status -> status > 0);
    }

    @Test
    void onACappedSemaphoreTheSweepEndsOnlyTheLeasesOfTheKeyItRenews() throws InterruptedException {
        int total = 5;
        int each = 3;
        SemaphoreKeys k0 = SemaphoreKeys.capped(prefix, "swept", "k0", total);
        SemaphoreKeys k1 = SemaphoreKeys.capped(prefix, "swept", "k1", total);
        String x = prefix + ":inbox:x";
        take(k0, each, "a", false, x);
        take(k0, each, "b", false, x);
        long c = take(k1, each, "c", false, x).token();
        take(k1, each, "d", false, x);
        take(k1, each, "e", false, x);
        // The cap is full: a waiter of k0.
        assertThat(take(k0, each, "w", true, prefix + ":inbox:y").status()).isEqualTo(Acquired.Status.QUEUED);
        Thread.sleep(1100);

        Renewed swept = scripts.renew(k0, each, HEARTBEAT, x, List.of("b"), List.of(), Long.MAX_VALUE / 2);
        assertThat(swept.swept()).isEqualTo(1);
        // k0: b and the waiter, granted with a's permit; the cap: still full.
        assertThat(swept.usage().used()).isEqualTo(2);
        assertThat(swept.usage().total()).isNotNull();
        assertThat(swept.usage().total().used()).isEqualTo(5);

        Renewed ofK1 = scripts.renew(k1, each, HEARTBEAT, x, List.of("c", "d", "e"));
        assertThat(ofK1.statuses()).allMatch(status -> status > 0);
        assertThat(ofK1.statuses().get(0)).isEqualTo(c);
        assertThat(scripts.renew(k0, each, HEARTBEAT, x, List.of("a")).statuses()).containsExactly(-1L);
    }
}
