package io.github.redissemaphore.test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.DiscoverySelector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

/**
 * What the suite does to a server a user points it at (REDIS_URL): a server of this test's own,
 * holding "the user's" data ({@link UsersRedis}), is given to a representative set of the core's
 * tests as if it were REDIS_URL (through system property {@code redis.test.url}, read first), run
 * here through a JUnit launcher. Afterwards every key of the user is still there with the same
 * value (DUMP) and its TTL, nothing of the tests is left, the server was never restarted, paused
 * into, reconfigured or flushed of its scripts, and the user's subscriber was not cut off. The tests
 * that fault the shared server skip themselves there; those on a {@code @Dedicated} server run on
 * one of their own. The starter's Spring tests are run the same way by its
 * {@code SpringTestsLeaveRedisUrlIntactTest}.
 */
@Tag("slow")
class RedisUrlIsLeftIntactTest {

    private static final String CORE = "io.github.redissemaphore.core.";
    private static final String SERVER = "(io.github.redissemaphore.test.RedisServer)";

    /**
     * The scripts, the engine's contract, registry and validation whole; the waiting, race and fault
     * tests that touch raw keys, child JVMs, the pub/sub clients of the shared server or a dedicated
     * server of their own.
     */
    private static final List<DiscoverySelector> SUITE = List.of(
            selectClass(CORE + "ScriptInvariantsTest"),
            selectClass(CORE + "StandaloneCoreTest"),
            selectClass(CORE + "RegistryTest"),
            selectClass(CORE + "ValidationTest"),
            selectMethod(CORE + "WaitingBehaviourTest#aGrantWhoseMessageIsLostIsFoundByTheNextTick"),
            selectMethod(CORE + "WaitingBehaviourTest#closingTheRegistryFailsWaitersAndReleasesPermits"),
            selectMethod(CORE + "WaitingBehaviourTest#"
                    + "aWaiterIsServedWithinATickWhileItsInboxConnectionIsKilledAndTheSubscriptionComesBack"),
            selectMethod(CORE + "WaitingBehaviourTest#afterItsConnectionIsKilledTheInboxHandsOffAgain"),
            selectMethod(CORE + "EngineRaceTest#closeCrossingAWaitThatIsStartingAnswersItAndLeavesNothing"),
            selectMethod(CORE + "EngineRaceTest#waitersWhoseQueueEntriesWereDeletedAreStillServedWithinTheirWait"),
            selectMethod(CORE + "EngineRaceTest#waitersAreServedWithinTheirWaitAfterRedisRestartedWithoutData"
                    + SERVER),
            selectMethod(CORE + "FaultBoundsTest#everyKindOfCallWorksAfterScriptFlush" + SERVER));

    /** The tests of {@link #SUITE} that fault the shared server, so skip themselves on a REDIS_URL one. */
    private static final Set<String> SKIPPED_THERE = Set.of(
            "aWaiterIsServedWithinATickWhileItsInboxConnectionIsKilledAndTheSubscriptionComesBack()",
            "afterItsConnectionIsKilledTheInboxHandsOffAgain()");

    @Test
    void theSuiteLeavesEveryKeyScriptSettingAndClientOfARedisUrlServerAsItWas() {
        try (UsersRedis users = UsersRedis.start()) {
            UsersRedis.Run run = users.runAsRedisUrl(SUITE);

            run.assertPassed();
            assertThat(run.aborted()).as("skipped: faults on the REDIS_URL server").containsOnlyKeys(SKIPPED_THERE)
                    .allSatisfy((test, reason) -> assertThat(reason).contains("CLIENT KILL is not run on"));
            users.assertLeftIntact();
        }
    }

    @Test
    void aRedisUrlServerRefusesTheFaultsOfTheSupport() {
        try (RedisServer users = RedisServers.start()) {
            UsersRedis.asRedisUrl(users, () -> {
                try (RedisServer asRedisUrl = RedisServers.open()) {
                    assertThat(asRedisUrl.owned()).isFalse();
                    assertThat(asRedisUrl.port()).isEqualTo(users.port());
                    assertThatThrownBy(asRedisUrl::flushAll).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("refusing FLUSHALL");
                    assertThatThrownBy(() -> asRedisUrl.pause(Duration.ofSeconds(1)))
                            .isInstanceOf(IllegalStateException.class).hasMessageContaining("refusing CLIENT PAUSE");
                    assertThatThrownBy(asRedisUrl::stop).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("refusing to stop");
                }
                return null;
            });
        }
    }
}
