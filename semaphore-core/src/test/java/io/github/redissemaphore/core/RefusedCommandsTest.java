package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What a user reads when the server refuses the library a command: {@code WAIT} missing from the
 * server ("unknown command", as on ElastiCache Serverless and Redis Cloud Essentials, made here
 * with {@code rename-command WAIT ""}) or refused by the ACL (NOPERM, as on Memorystore), with
 * settings that wait for replicas, fails the registry's start naming those settings, or the first
 * acquisition when the start could not reach Redis, and never a semaphore without replicas; a
 * NOPERM on a key, a command a script runs, or a channel names it and the rule that grants it; a
 * server without scripting (OCI Cache's sharded clusters) is named as one the library cannot use.
 */
@Tag("redis-compat")
@RedisTest
class RefusedCommandsTest {

    private static final String PASSWORD = "refused-pw-8Hq2";
    /** A quoted word of a MONITOR line, with its backslash escapes. */
    private static final Pattern QUOTED = Pattern.compile("\"((?:[^\"\\\\]++|\\\\.)*+)\"");
    /** The SHA1 the renew script is called by (EVALSHA). */
    private static final String RENEW_SHA = io.github.redissemaphore.core.internal.redis.Scripts.load("renew")
            .getSha1();
    private static final SemaphoreSettings REPLICATED = SemaphoreSettings.DEFAULTS.withReplicas(1,
            Duration.ofMillis(100));

    private final RedisServer server;
    private final List<SemaphoreRegistry> registries = new ArrayList<>();
    /** Per command name: whether the server lists it with key arguments. */
    private final Map<String, Boolean> keyArguments = new HashMap<>();

    RefusedCommandsTest(RedisServer server) {
        this.server = server;
    }

    @BeforeEach
    void ownedServer() {
        server.assumeOwned("ACL SETUSER");
    }

    @AfterEach
    void closeRegistries() {
        registries.forEach(SemaphoreRegistry::close);
    }

    @Test
    void replicasOnAServerWithoutWaitFailTheStartNamingTheSemaphoresThatWaitForThem() {
        try (RedisServer noWait = RedisServers.start(List.of("--rename-command", "WAIT", ""))) {
            SemaphoreRegistry.Builder builder = builder(noWait.connectionFactory(), noWait.keyPrefix())
                    .configure("reports", REPLICATED).configure("exports", SemaphoreSettings.DEFAULTS);

            assertThatThrownBy(builder::build).isInstanceOfSatisfying(ReplicasUnsupportedException.class, e -> {
                assertThat(e.semaphores()).containsExactly("reports");
                assertThat(e.defaults()).isFalse();
                assertThat(e.refusedByAcl()).isFalse();
                assertThat(e.serverReply()).startsWith("ERR unknown command");
                assertThat(e).hasMessageStartingWith("semaphore 'reports' waits for replicas to acknowledge each grant"
                                + " (replicas above 0), but this Redis server has no WAIT command")
                        .hasMessageContaining("Set replicas to 0: this server cannot wait for replicas.");
            });

            // the same server serves every semaphore that does not wait for replicas
            SemaphoreRegistry plain = build(builder(noWait.connectionFactory(), noWait.keyPrefix()));
            assertThat(plain.semaphore("reports").tryAcquire()).isPresent();
        }
    }

    @Test
    void aUserTheAclRefusesWaitIsToldToGrantItOrSetReplicasToZero() {
        RedisConnectionFactory noWait = userWith("~" + server.keyPrefix() + ":*", "&" + server.keyPrefix() + ":*",
                "+@all", "-wait");
        assertThatThrownBy(() -> build(builder(noWait, server.keyPrefix()).defaults(REPLICATED)))
                .isInstanceOfSatisfying(ReplicasUnsupportedException.class, e -> {
                    assertThat(e.semaphores()).isEmpty();
                    assertThat(e.defaults()).isTrue();
                    assertThat(e.refusedByAcl()).isTrue();
                    assertThat(e.serverReply()).startsWith("NOPERM");
                    assertThat(e).hasMessageStartingWith("the default settings wait for replicas to acknowledge each"
                                    + " grant (replicas above 0), but the ACL of the Redis user does not allow WAIT")
                            .hasMessageContaining("Set replicas to 0, or give the Redis user +set +wait"
                                    + " (docs/operating.md");
                });
    }

    @Test
    void inPlainJavaTheFirstAcquisitionOfASemaphoreThatWaitsForReplicasIsRefusedAndNothingIsGranted() {
        RedisConnectionFactory noWait = userWith("~" + server.keyPrefix() + ":*", "&" + server.keyPrefix() + ":*",
                "+@all", "-wait");
        SemaphoreRegistry registry = build(builder(noWait, server.keyPrefix()));
        RedisSemaphore replicated = registry.semaphore("replicated", REPLICATED);

        // the first call asks within the Redis timeout (on a loaded machine it may time out: the next one asks again)
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThatThrownBy(replicated::tryAcquire)
                .isInstanceOf(ReplicasUnsupportedException.class));
        // once known, every later acquisition of it is refused the same way
        assertThatThrownBy(replicated::tryAcquire).isInstanceOfSatisfying(ReplicasUnsupportedException.class,
                e -> assertThat(e.semaphores()).containsExactly("replicated"));
        assertThat(replicated.state()).extracting(SemaphoreState::used, SemaphoreState::holders,
                SemaphoreState::waiters).containsExactly(0, List.of(), List.of());
        assertThat(registry.semaphore("plain").tryAcquire()).isPresent();
    }

    @Test
    void aStartThatCannotReachRedisLeavesTheCheckToTheFirstAcquisition() throws Exception {
        try (RedisServer noWait = RedisServers.start(List.of("--rename-command", "WAIT", ""))) {
            RedisConnectionFactory factory = noWait.connectionFactory();
            noWait.stop();
            SemaphoreRegistry registry = build(builder(factory, noWait.keyPrefix()).defaults(REPLICATED));
            noWait.start();

            RedisSemaphore reports = registry.semaphore("reports");
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThatThrownBy(reports::tryAcquire)
                    .isInstanceOf(ReplicasUnsupportedException.class));
        }
    }

    @Test
    void offeringsThatRunWaitStartWithReplicas() {
        for (RestrictedOffering offering : List.of(RestrictedOffering.AIVEN_VALKEY, RestrictedOffering.DRAGONFLY)) {
            SemaphoreRegistry registry = build(builder(offering.on(server).newConnectionFactory(), server.keyPrefix())
                    .defaults(REPLICATED));
            assertThat(registry.semaphore("reports").settings().replicas()).isEqualTo(1);
        }
    }

    @Test
    void aServerWithoutScriptingIsToldToBeOneTheSemaphoresCannotWorkOn() {
        try (RedisServer noScripts = RedisServers.start(List.of("--rename-command", "EVALSHA", "",
                "--rename-command", "EVAL", ""))) {
            RedisSemaphore reports = build(builder(noScripts.connectionFactory(), noScripts.keyPrefix()))
                    .semaphore("reports");

            assertThatThrownBy(reports::tryAcquire).isInstanceOf(SemaphoreUnavailableException.class)
                    .hasMessageStartingWith("This Redis server runs no Lua scripts (it does not know EVALSHA), and"
                            + " every operation of the library is one: the semaphores cannot work on it (Redis: \"ERR"
                            + " unknown command")
                    .hasMessageEndingWith("What each Redis offering runs: docs/compatibility.md.");
        }
    }

    @Test
    void aKeyTheAclRefusesIsNamedWithTheRuleThatGrantsIt() {
        RedisConnectionFactory elsewhere = userWith("~elsewhere:*", "&elsewhere:*", "+@all");
        String prefix = server.keyPrefix();
        RedisSemaphore reports = build(builder(elsewhere, prefix)).semaphore("reports");

        assertThatThrownBy(reports::tryAcquire).isInstanceOf(SemaphoreUnavailableException.class)
                .hasMessageStartingWith("The ACL of the Redis user refused a key, in the acquire script of semaphore"
                        + " 'reports', which works on the keys " + prefix + ":{reports}:deadlines, ")
                .hasMessageContaining("Give the Redis user the ACL rule of docs/operating.md")
                .hasMessageContaining("~" + prefix + ":* grants every key of the library under key prefix '" + prefix
                        + "'")
                .hasMessageContaining("(Redis: \"NOPERM");
    }

    @Test
    void aCommandOfAScriptTheAclRefusesIsNamed() {
        RedisConnectionFactory noPersist = userWith("~" + server.keyPrefix() + ":*", "&" + server.keyPrefix() + ":*",
                "+@all", "-persist");
        RedisSemaphore reports = build(builder(noPersist, server.keyPrefix())).semaphore("reports");

        assertThatThrownBy(() -> reports.overrideLimit(2)).isInstanceOf(SemaphoreUnavailableException.class)
                .hasMessageStartingWith("The ACL of the Redis user refused the command PERSIST, in the override script"
                        + " of semaphore 'reports'")
                .hasMessageContaining("+persist is one of the commands it lists.");
    }

    @Test
    void aChannelTheAclRefusesLosesOnlyTheMessageAndTheWaiterIsServedAtItsTick() throws Exception {
        String prefix = server.keyPrefix();
        RedisConnectionFactory noChannels = userWith("~" + prefix + ":*", "+@all");
        SemaphoreSettings one = SemaphoreSettings.DEFAULTS.withPermits(1);
        RedisSemaphore holder = build(builder(noChannels, prefix)).semaphore("reports", one);
        RedisSemaphore waiter = build(builder(noChannels, prefix)).semaphore("reports", one);
        Permit held = holder.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiting = waiter.acquireAsync(1, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(10)).until(() -> holder.state().waiters().size() == 1);
        assertThat(waiter.localState().inboxSubscribed()).as("the inbox channel is refused too").isFalse();

        // A raised limit grants the waiter, whose inbox channel the script may not publish to: the
        // script publishes by redis.pcall, so its writes stand and only the message is lost; the
        // waiter hears of its grant at its next tick.
        holder.overrideLimit(2);
        assertThat(holder.state().holders()).hasSize(2);
        Permit permit = waiting.get(10, TimeUnit.SECONDS);
        assertThat(permit.isHeld()).isTrue();
        permit.release();
        held.release();
        holder.clearLimitOverride();
    }

    /**
     * ElastiCache Serverless and Dragonfly refuse a script that touches a key it did not declare;
     * Redis has no such setting, so this reads what the scripts do: every operation the API has
     * (grants, a wait handed a permit, renewals, an extension, a partial release, an adoption, a
     * release by id, a wait that times out, a runtime limit, the state), with MONITOR, which shows
     * the commands each script runs right after its call, and every key those commands touch (as
     * the server names them: COMMAND GETKEYS) is one of the keys the call declared.
     */
    @Test
    void everyKeyAScriptTouchesIsOneItDeclares() throws Exception {
        // Renewed every 333 ms, heartbeats every 200 ms: both seen soon, with room for a loaded machine.
        SemaphoreSettings three = SemaphoreSettings.DEFAULTS.withPermits(3).withLeaseTime(Duration.ofSeconds(1));
        SemaphoreRegistry one = build(builder(server.connectionFactory(), server.keyPrefix()));
        SemaphoreRegistry two = build(builder(server.connectionFactory(), server.keyPrefix())
                .waiterTick(Duration.ofMillis(200)));
        RedisSemaphore here = one.semaphore("declared", three);
        RedisSemaphore there = two.semaphore("declared", three);
        List<String> lines;
        try (CommandMonitor monitor = new CommandMonitor(server.host(), server.port())) {
            lines = CommandMonitor.allCommandsDuring(List.of(monitor), () -> {
                try {
                    Permit twoPermits = here.tryAcquire(2, Duration.ZERO).orElseThrow();
                    CompletableFuture<Permit> waiting = there.acquireAsync(2, Duration.ofSeconds(10));
                    await().atMost(Duration.ofSeconds(10)).until(() -> here.state().waiters().size() == 1);
                    String waiterId = here.state().waiters().get(0).waiterId();
                    // The renewal of the lease and the heartbeat of the waiter, each seen by the
                    // server before anything else is done.
                    monitor.awaitLine(Duration.ofSeconds(10), line -> isRenewalOf(line, twoPermits.id()));
                    monitor.awaitLine(Duration.ofSeconds(10), line -> isRenewalOf(line, waiterId));
                    twoPermits.extend(Duration.ofSeconds(5));
                    twoPermits.release(1);
                    twoPermits.release();
                    Permit handedOver = waiting.get(10, TimeUnit.SECONDS);
                    Permit adopted = here.adopt(handedOver.id()).orElseThrow();
                    assertThat(here.release(adopted.id())).isTrue();
                    Permit all = here.tryAcquire(3, Duration.ZERO).orElseThrow();
                    assertThat(there.tryAcquire(Duration.ofMillis(200))).isEmpty();
                    here.overrideLimit(4);
                    here.clearLimitOverride();
                    all.release();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }
        List<String> declared = List.of();
        int scripts = 0;
        int touched = 0;
        for (String line : lines) {
            List<String> words = words(line);
            if (!line.contains(" lua]")) {
                String command = words.isEmpty() ? "" : words.get(0).toLowerCase(Locale.ROOT);
                if (command.equals("evalsha") || command.equals("eval")) {
                    int count = Integer.parseInt(words.get(2));
                    declared = words.subList(3, 3 + count);
                    scripts++;
                }
                continue;
            }
            List<String> keys = keysOf(words);
            touched += keys.size();
            assertThat(declared).as("the keys declared by the call before %s", line).containsAll(keys);
        }
        assertThat(lines).as("renewal calls seen").anyMatch(line -> isRenewalOf(line, null));
        assertThat(scripts).as("script calls seen").isGreaterThan(10);
        assertThat(touched).as("keys touched by the scripts' commands").isGreaterThan(10);
    }

    /**
     * @return whether a MONITOR line is a call of the renew script (by its SHA1, or its source when
     *         sent by EVAL after a NOSCRIPT) that carries {@code id} (any id if null)
     */
    private static boolean isRenewalOf(String line, String id) {
        if (line.contains(" lua]")) {
            return false;
        }
        List<String> words = words(line);
        if (words.size() < 3) {
            return false;
        }
        String command = words.get(0).toLowerCase(Locale.ROOT);
        boolean renew = command.equals("evalsha") ? words.get(1).equals(RENEW_SHA)
                : command.equals("eval") && words.get(1).startsWith("-- renew:");
        return renew && (id == null || words.subList(2, words.size()).contains(id));
    }

    /** @return the quoted words of a MONITOR line: the command and its arguments */
    private static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        Matcher word = QUOTED.matcher(line);
        while (word.find()) {
            words.add(word.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
        return words;
    }

    /**
     * @return the keys of a command, as the server names them (COMMAND GETKEYS); none for a command
     *         the server lists without key arguments (COMMAND INFO: first key 0, no movable keys:
     *         TIME, PUBLISH), which GETKEYS refuses ("has no key arguments", or on Redis 7.0 "wrong
     *         number of arguments" for TIME). Any other refusal is no answer about the keys and
     *         fails the test, rather than passing as "touches none".
     */
    private List<String> keysOf(List<String> command) {
        if (!hasKeyArguments(command.get(0))) {
            return List.of();
        }
        List<String> getKeys = new ArrayList<>(List.of("COMMAND", "GETKEYS"));
        getKeys.addAll(command);
        List<?> keys = (List<?>) server.adminCommand(getKeys.toArray(String[]::new));
        return keys.stream().map(String::valueOf).toList();
    }

    /** @return whether the server lists command {@code name} with key arguments (COMMAND INFO) */
    private boolean hasKeyArguments(String name) {
        return keyArguments.computeIfAbsent(name.toLowerCase(Locale.ROOT), command -> {
            List<?> infos = (List<?>) server.adminCommand("COMMAND", "INFO", command);
            assertThat(infos).as("COMMAND INFO %s", command).hasSize(1).doesNotContainNull();
            List<?> info = (List<?>) infos.get(0);
            boolean movable = ((List<?>) info.get(2)).stream().map(String::valueOf)
                    .anyMatch(flag -> flag.equalsIgnoreCase("movablekeys"));
            return movable || ((Number) info.get(3)).longValue() != 0;
        });
    }

    /**
     * @return a factory logging in as a user of its own with {@code rules} on top of {@code reset on
     *         >password resetchannels} (Redis 6.2's {@code reset} leaves every channel allowed)
     */
    private RedisConnectionFactory userWith(String... rules) {
        String user = "refused-" + registries.size() + "-" + System.nanoTime();
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user, "reset", "on", ">" + PASSWORD,
                "resetchannels"));
        command.addAll(List.of(rules));
        server.adminCommand(command.toArray(String[]::new));
        return server.connectionFactory(user, PASSWORD);
    }

    private static SemaphoreRegistry.Builder builder(RedisConnectionFactory factory, String keyPrefix) {
        return SemaphoreRegistry.builder(factory).keyPrefix(keyPrefix);
    }

    private SemaphoreRegistry build(SemaphoreRegistry.Builder builder) {
        SemaphoreRegistry registry = builder.build();
        registries.add(registry);
        return registry;
    }
}
