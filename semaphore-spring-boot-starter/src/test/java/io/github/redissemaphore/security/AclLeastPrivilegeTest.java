package io.github.redissemaphore.security;

import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.actuate.SemaphoresEndpoint.SemaphoreDescriptor;
import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
import io.github.redissemaphore.test.SchedulingNoise;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Least privilege, proved on a real Redis whose application users have only the rule of
 * docs/operating.md ({@link AclRule}): the whole starter works as such a user (every operation, with a replica for
 * {@code replicas=1}) and Redis refuses none of its commands while the run uses every command of
 * the rule, a second application confined to another key prefix is refused our keys and channels,
 * and we theirs, and a user with an older rule that lacks a command is refused before a script
 * changes anything.
 */
@Tag("slow")
class AclLeastPrivilegeTest {

    private static final String APP = "app";
    private static final String APP_PASSWORD = "app-pw-4Jq8";
    private static final String OTHER = "billing-app";
    private static final String OTHER_PASSWORD = "billing-pw-7Tz2";
    private static final String OTHER_PREFIX = "billing";
    /** A user with the rule of an older release's documentation, which lacked {@code +persist}. */
    private static final String OLD_RULE = "old-rule-app";
    private static final String OLD_RULE_PASSWORD = "old-rule-pw-3Kd9";

    private static RedisServer server;
    /** A replica of {@link #server}, for grants that wait for it ({@code replicas=1}). */
    private static RedisServer replica;

    private final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeAll
    static void startRedisWithTwoApplicationUsersAndAReplica() {
        List<String> withReplicas = new ArrayList<>(AclRule.COMMANDS);
        withReplicas.addAll(AclRule.REPLICATION_COMMANDS);
        List<String> oldRule = new ArrayList<>(AclRule.COMMANDS);
        oldRule.remove("persist");
        List<String> arguments = new ArrayList<>(AclRule.serverArguments(APP, APP_PASSWORD, "semaphore", withReplicas));
        arguments.addAll(AclRule.serverArguments(OTHER, OTHER_PASSWORD, OTHER_PREFIX));
        arguments.addAll(AclRule.serverArguments(OLD_RULE, OLD_RULE_PASSWORD, "semaphore", oldRule));
        server = RedisServers.start(arguments);
        // The replica logs in to the master as the default user, which the support leaves unrestricted.
        replica = RedisServers.start(List.of("--replicaof", server.host(), String.valueOf(server.port())));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> replica.info("replication").contains("master_link_status:up"));
    }

    @AfterAll
    static void stopRedis() {
        if (replica != null) {
            replica.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void clean() {
        server.flushAll();
        server.adminCommand("ACL", "LOG", "RESET");
        server.adminCommand("CONFIG", "RESETSTAT");
    }

    /** The machine's scheduling noise while the test runs, which widens the bounds timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
        noise.close();
    }

    /** Two instances as the restricted user, with the commands of every feature of the starter. */
    private static ApplicationContextRunner application() {
        return SecuredContexts.runner()
                .withPropertyValues(SecuredContexts.loginTo(server, APP, APP_PASSWORD))
                .withPropertyValues(
                        // a waiter is woken by the inbox message alone: no tick before 10 s
                        "distributed-semaphore.waiter-tick=10s",
                        "distributed-semaphore.waiter-heartbeat=30s",
                        // renewed every 100 ms
                        "distributed-semaphore.semaphores.renewed.lease-time=300ms",
                        "distributed-semaphore.semaphores.handoff.wait-time=20s",
                        "distributed-semaphore.semaphores.pool.permits=3",
                        // a grant is reported once the replica has it (Redis WAIT)
                        "distributed-semaphore.semaphores.replicated.replicas=1",
                        "distributed-semaphore.semaphores.replicated.replication-timeout=5s",
                        "management.endpoints.web.exposure.include=semaphores",
                        "management.endpoint.semaphores.access=UNRESTRICTED")
                .withBean(Guarded.class).withBean(Renewals.class);
    }

    @Test
    void theAllowedUserCarriesTheWholeStarterAndRedisRefusesNoneOfItsCommands() {
        List<String> clientsDuringTheRun = new ArrayList<>();
        ApplicationContextRunner instance = application();
        instance.run(first -> instance.run(second -> {
            assertThat(first).hasNotFailed();
            assertThat(second).hasNotFailed();
            Guarded one = first.getBean(Guarded.class);
            Guarded two = second.getBean(Guarded.class);
            SemaphoresEndpoint endpoint = second.getBean(SemaphoresEndpoint.class);

            // acquire and release through the aspect
            assertThat(one.renewed(null)).isEqualTo("done");
            assertThat(two.handOff(null)).isEqualTo("done");

            // renewal: held across four lease times, still the same lease, nobody else gets it
            Gate holding = new Gate();
            Future<String> holder = callers.submit(() -> one.renewed(holding));
            holding.awaitEntered(1);
            long entered = System.nanoTime(); // after the grant
            String permitId = onlyHolder((SemaphoreDescriptor) endpoint.semaphore("renewed"));
            // Past four lease times, through renewals this instance heard come back (not a sleep
            // trusted to have seen one): the same lease is then held only because it was renewed.
            Renewals renewals = first.getBean(Renewals.class);
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
                    .until(() -> renewals.of("renewed") >= 4
                            && Renewals.since(entered).compareTo(Duration.ofMillis(1200)) > 0);
            assertThat(onlyHolder((SemaphoreDescriptor) endpoint.semaphore("renewed"))).isEqualTo(permitId);
            assertThatThrownBy(() -> two.renewed(null)).isInstanceOf(SemaphoreRejectedException.class);

            // the endpoint's list, then the operator's forced release from the other instance
            assertThat(endpoint.semaphores().semaphores())
                    .anySatisfy(summary -> {
                        assertThat(summary.state().name()).isEqualTo("renewed");
                        assertThat(summary.state().used()).isEqualTo(1);
                    });
            assertThat(endpoint.release("renewed", permitId).released()).isTrue();
            assertThat(((SemaphoreDescriptor) endpoint.semaphore("renewed")).used()).isZero();
            assertThat(two.renewed(null)).isEqualTo("done");
            holding.open();
            assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");

            // a wait ended by a hand-off: the grant is published to the waiting instance's inbox
            long publishedBefore = server.commandCalls().getOrDefault("publish", 0L);
            Gate busy = new Gate();
            Future<String> first1 = callers.submit(() -> one.handOff(busy));
            busy.awaitEntered(1);
            Future<String> waiter = callers.submit(() -> two.handOff(null));
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> ((SemaphoreDescriptor) endpoint.semaphore("handoff")).waiters().size() == 1);
            long opened = System.nanoTime();
            busy.open();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            Duration handOff = Duration.ofNanos(System.nanoTime() - opened);
            assertThat(first1.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(server.commandCalls().getOrDefault("publish", 0L)).isGreaterThan(publishedBefore);
            // the waiter's next tick was 10 s away and the lease 30 s: only the message could wake it
            noise.assertTookLessThan("the hand-off", opened, opened + handOff.toNanos(), Duration.ofSeconds(5));

            runtimeLimitsThroughTheApiAndTheEndpoint(first.getBean(SemaphoreRegistry.class), endpoint);
            permitsThatMove(first.getBean(SemaphoreRegistry.class), second.getBean(SemaphoreRegistry.class));
            waitsThatEndWithoutAPermit(first.getBean(SemaphoreRegistry.class), second.getBean(SemaphoreRegistry.class));
            grantsThatWaitForTheReplica(second.getBean(SemaphoreRegistry.class));
            grantsWithinARate(first.getBean(SemaphoreRegistry.class));
            // a server whose script cache is empty (restart, failover): the script is sent with EVAL
            server.adminCommand("SCRIPT", "FLUSH");
            assertThat(first.getBean(SemaphoreRegistry.class).semaphore("pool").state().used()).isZero();

            clientsDuringTheRun.addAll(SecuredContexts.clients(server));
        }));

        // every connection of the two instances was the restricted user's, subscriber included (one
        // caught while it was being opened has run no command yet, and shows the default user)
        assertThat(clientsDuringTheRun).filteredOn(SecuredContexts::ranACommand).isNotEmpty()
                .allSatisfy(line -> assertThat(SecuredContexts.clientField(line, "user")).isEqualTo(APP))
                .anySatisfy(line -> assertThat(SecuredContexts.clientField(line, "sub")).isEqualTo("1"));
        // closing the subscriptions (UNSUBSCRIBE, PING) is traffic too: wait for the connections to go
        await().atMost(Duration.ofSeconds(10)).until(() -> SecuredContexts.clients(server).isEmpty());
        assertThat(SecuredContexts.refused(server)).as("commands Redis refused").isEmpty();
        // and the run used every command of the rule: the rule grants nothing the library does not send,
        // but for ZRANGEBYSCORE and ZSCORE, which the scripts run only once a deadline has passed (a
        // purge) and for a waiter's renewal (a tick 10 s apart here), and ZRANGEBYLEX and HGETALL, which
        // only a capped semaphore's keys need: AclRuleTest finds them in the scripts
        List<String> rule = new ArrayList<>(AclRule.COMMANDS);
        rule.addAll(AclRule.REPLICATION_COMMANDS);
        rule.removeAll(List.of("zrangebyscore", "zscore", "zrangebylex", "hgetall"));
        assertThat(server.commandCalls()).containsKeys(rule.toArray(String[]::new));
        assertThat(server.keys("*")).isNotEmpty().allSatisfy(key -> assertThat(key).startsWith("semaphore:"));
    }

    /** Set and cleared through the API, then through the endpoint's write operation: PERSIST, then the TTL back. */
    private static void runtimeLimitsThroughTheApiAndTheEndpoint(SemaphoreRegistry registry,
                                                                 SemaphoresEndpoint endpoint) {
        RedisSemaphore pool = registry.semaphore("pool");
        pool.overrideLimit(2);
        assertThat(pool.state().limit()).isEqualTo(2);
        assertThat(server.pttl("semaphore:{pool}:state")).as("an override outlives an idle semaphore").isEqualTo(-1);
        pool.clearLimitOverride();
        assertThat(pool.state().limitSource()).isEqualTo(SemaphoreState.CONFIGURED);
        assertThat(server.pttl("semaphore:{pool}:state")).isPositive();

        assertThat(((SemaphoreDescriptor) endpoint.limit("pool", 1, null, null, null)).limitSource())
                .isEqualTo(SemaphoreState.OVERRIDE);
        SemaphoreDescriptor cleared = (SemaphoreDescriptor) endpoint.limit("pool", null, null, null, null);
        assertThat(cleared.limitSource()).isEqualTo(SemaphoreState.CONFIGURED);
        assertThat(cleared.limit()).isEqualTo(3);
    }

    /** A lease of two permits extended, given back in part, adopted by the other instance, released there by id. */
    private static void permitsThatMove(SemaphoreRegistry one, SemaphoreRegistry two) throws InterruptedException {
        Permit lease = one.semaphore("pool").tryAcquire(2, Duration.ZERO).orElseThrow();
        lease.extend(Duration.ofMinutes(2));
        assertThat(lease.leaseRemaining()).isGreaterThan(Duration.ofMinutes(1));
        lease.release(1);
        assertThat(one.semaphore("pool").state().used()).isEqualTo(1);

        Permit adopted = two.semaphore("pool").adopt(lease.id()).orElseThrow();
        assertThat(adopted.count()).isEqualTo(1);
        assertThat(adopted.fencingToken()).isEqualTo(lease.fencingToken());
        await().atMost(Duration.ofSeconds(10)).until(() -> !lease.isHeld());
        assertThat(two.semaphore("pool").release(adopted.id())).isTrue();
        assertThat(two.semaphore("pool").release(adopted.id())).as("released once").isFalse();
        assertThat(one.semaphore("pool").state().used()).isZero();
    }

    /** A wait that ends at its deadline and one ended by an interrupt: each leaves the queue (CANCEL). */
    private void waitsThatEndWithoutAPermit(SemaphoreRegistry one, SemaphoreRegistry two) throws Exception {
        Permit all = one.semaphore("pool").tryAcquire(3, Duration.ZERO).orElseThrow();
        RedisSemaphore pool = two.semaphore("pool");

        long started = System.nanoTime();
        assertThat(pool.tryAcquire(Duration.ofMillis(300))).isEmpty();
        noise.assertTookLessThan("tryAcquire(300ms) on a full pool", started, System.nanoTime(),
                Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(10)).until(() -> pool.state().waiters().isEmpty());

        Future<Optional<Permit>> interrupted = callers.submit(() -> pool.tryAcquire(Duration.ofSeconds(60)));
        await().atMost(Duration.ofSeconds(10)).until(() -> pool.state().waiters().size() == 1);
        interrupted.cancel(true);
        await().atMost(Duration.ofSeconds(10)).until(() -> pool.state().waiters().isEmpty());

        all.release();
        assertThat(pool.state().used()).isZero();
    }

    /**
     * A rate of 3 grants per 300 ms, asked for every 20 ms: each grant pushes its time onto the
     * window (RPUSH, LLEN), a caller that finds it full reads its oldest (LINDEX), and one that
     * comes once the oldest aged out, while the newer keep the window, drops it (LTRIM).
     */
    private static void grantsWithinARate(SemaphoreRegistry registry) {
        RedisSemaphore rated = registry.semaphore("rated",
                SemaphoreSettings.DEFAULTS.withPermits(3).withRateLimit(3, Duration.ofMillis(300)));
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
            rated.tryAcquire().ifPresent(Permit::release);
            return server.commandCalls().containsKey("ltrim");
        });
    }

    /** {@code replicas=1}: each grant is written to a marker key and waited for with WAIT. */
    private static void grantsThatWaitForTheReplica(SemaphoreRegistry registry) {
        long waitsBefore = server.commandCalls().getOrDefault("wait", 0L);
        try (Permit permit = registry.semaphore("replicated").tryAcquire().orElseThrow()) {
            assertThat(permit.isHeld()).isTrue();
        }
        assertThat(server.commandCalls().getOrDefault("wait", 0L)).isGreaterThan(waitsBefore);
    }

    @Test
    void aRuleThatLacksACommandIsRefusedBeforeTheScriptChangesAnything() {
        String state = "semaphore:{reports}:state";
        SecuredContexts.runner()
                .withPropertyValues(SecuredContexts.loginTo(server, OLD_RULE, OLD_RULE_PASSWORD))
                .run(context -> {
                    RedisSemaphore semaphore = context.getBean(SemaphoreRegistry.class).semaphore("reports");
                    // everything else works under the older rule
                    semaphore.tryAcquire().orElseThrow().release();
                    Object before = server.adminCommand("HGETALL", state);

                    // setting a runtime limit needs PERSIST, which that rule lacks ("NOPERM ..." from
                    // Redis 7.2 on, "ERR The user executing the script can't run this command ..." before)
                    assertThatThrownBy(() -> semaphore.overrideLimit(2))
                            .isInstanceOf(SemaphoreUnavailableException.class)
                            .hasMessageMatching("(?s).*(NOPERM|can't run this command).*");

                    // refused before the first write: no override half-set, the state key keeps its TTL
                    assertThat(server.adminCommand("HGETALL", state)).isEqualTo(before);
                    assertThat(server.pttl(state)).isPositive();
                    assertThat(semaphore.state().limitSource()).isEqualTo(SemaphoreState.CONFIGURED);
                });
        assertThat(SecuredContexts.aclLog(server)).anySatisfy(entry -> {
            assertThat(entry.get("username")).isEqualTo(OLD_RULE);
            assertThat(entry.get("object")).isEqualTo("persist");
        });
    }

    @Test
    void theRuleGrantsNothingBeyondTheLibrarysTraffic() {
        asUser(APP, APP_PASSWORD, redis -> {
            // (Redis 7 names the subcommand, 'config|get'; Redis 6.2 only the command)
            assertNoPermission(() -> redis.del("semaphore:{reports}:state"), "'del'");
            assertNoPermission(() -> redis.get("semaphore:anything"), "'get'");
            assertNoPermission(() -> redis.keys("*"), "'keys'");
            assertNoPermission(redis::flushall, "'flushall'");
            assertNoPermission(() -> redis.configGet("*"), "'config");
            assertNoPermission(() -> redis.scriptLoad("return 1"), "'script");
            assertNoPermission(redis::info, "'info'");
            // allowed commands still stop at the prefix
            assertNoPermission(() -> redis.hset("elsewhere", "field", "value"), "keys");
        });
    }

    @Test
    void aUserConfinedToAnotherPrefixIsRefusedOurKeysAndChannelsAndWeTheirs() {
        // each application works on its own prefix
        ApplicationContextRunner ours = SecuredContexts.runner()
                .withPropertyValues(SecuredContexts.loginTo(server, APP, APP_PASSWORD));
        ApplicationContextRunner theirs = SecuredContexts.runner()
                .withPropertyValues(SecuredContexts.loginTo(server, OTHER, OTHER_PASSWORD))
                .withPropertyValues("distributed-semaphore.key-prefix=" + OTHER_PREFIX);
        ours.run(context -> assertThat(tryAcquire(context, "reports")).isPresent());
        theirs.run(context -> assertThat(tryAcquire(context, "reports")).isPresent());
        assertThat(SecuredContexts.refused(server)).isEmpty();

        // the other application pointed at our prefix, and we at theirs, through the whole starter
        theirs.withPropertyValues("distributed-semaphore.key-prefix=semaphore")
                .run(context -> assertRefusedByTheScripts(context, OTHER, "semaphore:"));
        ours.withPropertyValues("distributed-semaphore.key-prefix=" + OTHER_PREFIX)
                .run(context -> assertRefusedByTheScripts(context, APP, OTHER_PREFIX + ":"));

        // straight to the keys and channels, both ways
        asUser(OTHER, OTHER_PASSWORD, redis -> {
            assertNoPermission(() -> redis.hget("semaphore:{reports}:state", "used"), "keys");
            assertNoPermission(() -> redis.publish("semaphore:inbox:someone", "1 1"), "channels");
        });
        asUser(APP, APP_PASSWORD, redis -> {
            assertNoPermission(() -> redis.hget(OTHER_PREFIX + ":{reports}:state", "used"), "keys");
            assertNoPermission(() -> redis.publish(OTHER_PREFIX + ":inbox:someone", "1 1"), "channels");
        });
        assertSubscribeRefused(OTHER, OTHER_PASSWORD, "semaphore:inbox:someone");
        assertSubscribeRefused(APP, APP_PASSWORD, OTHER_PREFIX + ":inbox:someone");
        // and the keys each application made are still all under its own prefix
        assertThat(server.keys("*")).allSatisfy(key -> assertThat(key).satisfiesAnyOf(
                k -> assertThat(k).startsWith("semaphore:"), k -> assertThat(k).startsWith(OTHER_PREFIX + ":")));
    }

    @Test
    void theDocsGiveExactlyTheRuleTheseTestsGrant() throws IOException {
        Path page = Path.of("..", "docs", "operating.md");
        assumeThat(Files.exists(page)).as("docs/operating.md of the project next to this module").isTrue();
        String text = Files.readString(page, StandardCharsets.UTF_8);
        assertThat(text).contains(AclRule.setUserLine("app", "app-password", "semaphore", false));
        assertThat(text).contains(String.join(" ", AclRule.CLUSTER_COMMANDS.stream().map(c -> "+" + c).toList()));
        assertThat(text).contains(String.join(" ", AclRule.REPLICATION_COMMANDS.stream().map(c -> "+" + c).toList()));
    }

    /** Acquiring fails with NOPERM from the script; the inbox subscription is refused as well. */
    private static void assertRefusedByTheScripts(AssertableApplicationContext context, String user, String foreignPrefix) {
        assertThat(context).hasNotFailed();
        assertThatThrownBy(() -> tryAcquire(context, "reports"))
                .isInstanceOf(SemaphoreUnavailableException.class)
                .hasMessageContaining("'reports'")
                .hasMessageContaining("NOPERM");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            List<Map<String, Object>> refused = SecuredContexts.aclLog(server).stream()
                    .filter(entry -> user.equals(entry.get("username")))
                    .toList();
            // a key of the acquire script (declared, so checked before the script runs), and the
            // inbox channel the instance subscribes to
            assertThat(refused).anySatisfy(entry -> {
                assertThat(entry.get("reason")).isEqualTo("key");
                assertThat(String.valueOf(entry.get("object"))).startsWith(foreignPrefix).contains("{reports}");
            });
            assertThat(refused).anySatisfy(entry -> {
                assertThat(entry.get("reason")).isEqualTo("channel");
                assertThat(String.valueOf(entry.get("object"))).startsWith(foreignPrefix + "inbox:");
            });
        });
    }

    private static void assertSubscribeRefused(String user, String password, String channel) {
        RedisClient client = RedisClient.create(uri(user, password));
        try (StatefulRedisPubSubConnection<String, String> connection = client.connectPubSub()) {
            assertNoPermission(() -> connection.sync().subscribe(channel), "channels");
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static void asUser(String user, String password, Consumer<RedisCommands<String, String>> commands) {
        RedisClient client = RedisClient.create(uri(user, password));
        try (var connection = client.connect()) {
            commands.accept(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static RedisURI uri(String user, String password) {
        return RedisURI.builder().withHost(server.host()).withPort(server.port())
                .withAuthentication(user, password.toCharArray()).withTimeout(Duration.ofSeconds(2)).build();
    }

    private static void assertNoPermission(Runnable command, String what) {
        assertThatThrownBy(command::run).hasMessageStartingWith("NOPERM").hasMessageContaining(what);
    }

    private static Optional<Permit> tryAcquire(ApplicationContext context, String semaphore) {
        Optional<Permit> permit = context.getBean(SemaphoreRegistry.class).semaphore(semaphore).tryAcquire();
        permit.ifPresent(Permit::release);
        return permit;
    }

    private static String onlyHolder(SemaphoreDescriptor semaphore) {
        assertThat(semaphore.holders()).hasSize(1);
        return semaphore.holders().get(0).holder().permitId();
    }

    /** The application's guarded methods; a gate keeps a caller inside while the test looks. */
    static class Guarded {

        @DistributedSemaphore("renewed")
        public String renewed(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }

        @DistributedSemaphore("handoff")
        public String handOff(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }
    }
}
