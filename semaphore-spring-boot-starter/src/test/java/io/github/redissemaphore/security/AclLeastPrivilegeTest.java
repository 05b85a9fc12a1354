package io.github.redissemaphore.security;

import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.actuate.SemaphoresEndpoint.SemaphoreDescriptor;
import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
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
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Least privilege, proved on a real Redis whose application users have only the README's rule
 * ({@link AclRule}): the whole starter works as such a user and Redis refuses none of its
 * commands, while a second application confined to another key prefix is refused our keys and
 * channels, and we theirs.
 */
class AclLeastPrivilegeTest {

    private static final String APP = "app";
    private static final String APP_PASSWORD = "app-pw-4Jq8";
    private static final String OTHER = "billing-app";
    private static final String OTHER_PASSWORD = "billing-pw-7Tz2";
    private static final String OTHER_PREFIX = "billing";

    private static RedisServer server;

    private final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeAll
    static void startRedisWithTwoApplicationUsers() {
        List<String> arguments = new ArrayList<>(AclRule.serverArguments(APP, APP_PASSWORD, "semaphore"));
        arguments.addAll(AclRule.serverArguments(OTHER, OTHER_PASSWORD, OTHER_PREFIX));
        server = RedisServers.start(arguments);
    }

    @AfterAll
    static void stopRedis() {
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

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
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
                        "management.endpoints.web.exposure.include=semaphores",
                        "management.endpoint.semaphores.access=UNRESTRICTED")
                .withBean(Guarded.class);
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
            String permitId = onlyHolder(endpoint.semaphore("renewed"));
            sleep(Duration.ofMillis(1200));
            assertThat(onlyHolder(endpoint.semaphore("renewed"))).isEqualTo(permitId);
            assertThatThrownBy(() -> two.renewed(null)).isInstanceOf(SemaphoreRejectedException.class);

            // the endpoint's list, then the operator's forced release from the other instance
            assertThat(endpoint.semaphores().semaphores())
                    .anySatisfy(summary -> {
                        assertThat(summary.name()).isEqualTo("renewed");
                        assertThat(summary.used()).isEqualTo(1);
                    });
            assertThat(endpoint.release("renewed", permitId).released()).isTrue();
            assertThat(endpoint.semaphore("renewed").used()).isZero();
            assertThat(two.renewed(null)).isEqualTo("done");
            holding.open();
            assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");

            // a wait ended by a hand-off: the grant is published to the waiting instance's inbox
            long publishedBefore = server.commandCalls().getOrDefault("publish", 0L);
            Gate busy = new Gate();
            Future<String> first1 = callers.submit(() -> one.handOff(busy));
            busy.awaitEntered(1);
            Future<String> waiter = callers.submit(() -> two.handOff(null));
            await().atMost(Duration.ofSeconds(5)).until(() -> endpoint.semaphore("handoff").waiters().size() == 1);
            long opened = System.nanoTime();
            busy.open();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            Duration handOff = Duration.ofNanos(System.nanoTime() - opened);
            assertThat(first1.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(server.commandCalls().getOrDefault("publish", 0L)).isGreaterThan(publishedBefore);
            // the waiter's next tick was 10 s away and the lease 30 s: only the message could wake it
            assertThat(handOff).isLessThan(Duration.ofSeconds(5));

            clientsDuringTheRun.addAll(SecuredContexts.clients(server));
        }));

        // every connection of the two instances was the restricted user's, subscriber included
        assertThat(clientsDuringTheRun).isNotEmpty()
                .allSatisfy(line -> assertThat(SecuredContexts.clientField(line, "user")).isEqualTo(APP))
                .anySatisfy(line -> assertThat(SecuredContexts.clientField(line, "sub")).isEqualTo("1"));
        // closing the subscriptions (UNSUBSCRIBE, PING) is traffic too: wait for the connections to go
        await().atMost(Duration.ofSeconds(10)).until(() -> SecuredContexts.clients(server).isEmpty());
        assertThat(SecuredContexts.refused(server)).as("commands Redis refused").isEmpty();
        assertThat(server.commandCalls()).containsKeys("evalsha", "publish", "subscribe", "unsubscribe", "ping");
        assertThat(server.keys("*")).isNotEmpty().allSatisfy(key -> assertThat(key).startsWith("semaphore:"));
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
    void theReadmeGivesExactlyTheRuleTheseTestsGrant() throws IOException {
        Path readme = Path.of("..", "README.md");
        assumeThat(Files.exists(readme)).as("README.md of the project next to this module").isTrue();
        String text = Files.readString(readme, StandardCharsets.UTF_8);
        assertThat(text).contains(AclRule.setUserLine("app", "app-password", "semaphore", false));
        assertThat(text).contains(String.join(" ", AclRule.CLUSTER_COMMANDS.stream().map(c -> "+" + c).toList()));
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
        return semaphore.holders().get(0).permitId();
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
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
