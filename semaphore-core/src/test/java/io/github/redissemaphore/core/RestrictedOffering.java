package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A managed Redis offering, as a real {@code redis-server} restricts what the offering takes
 * away: an ACL user that may run every command ({@code +@all}) but the ones the offering refuses,
 * on the keys and channels of the test's prefix only. Each stands for the offerings named in its
 * description (docs/compatibility.md maps them); where an offering does not have a command at
 * all ("unknown command"), the ACL refuses it here (NOPERM), which for a library that must never
 * send it is the same test: {@link #assertRefusedNothing} proves it never did.
 */
enum RestrictedOffering {

    /**
     * ElastiCache Serverless and Redis Cloud's Essentials plans (no {@code WAIT}: "unknown
     * command"), and Memorystore ({@code NOPERM} on every command it does not list, {@code WAIT}
     * and the admin commands among them): no {@code WAIT}, no admin or "dangerous" command
     * ({@code INFO}, {@code CONFIG}, {@code CLIENT LIST/KILL/PAUSE}, {@code CLUSTER} admin
     * subcommands, {@code ROLE}, {@code KEYS}, {@code MONITOR}, {@code DEBUG}...).
     */
    NO_WAIT_NO_ADMIN("ElastiCache Serverless, Redis Cloud Essentials, Memorystore", "-wait", "-@admin", "-@dangerous"),

    /**
     * Aiven for Valkey: the commands its documentation lists as disabled, {@code CLUSTER},
     * {@code COMMAND} and {@code ROLE} among them.
     */
    AIVEN_VALKEY("Aiven for Valkey", "-bgrewriteaof", "-cluster", "-command", "-role", "-debug", "-failover",
            "-migrate", "-slaveof", "-replicaof", "-acl", "-bgsave", "-save", "-config", "-lastsave", "-monitor",
            "-shutdown"),

    /** Dragonfly: several {@code CLIENT} subcommands refused; here every one of them. */
    DRAGONFLY("Dragonfly", "-client");

    private static final String PASSWORD = "offering-pw-5Rc1";

    private final String offerings;
    private final List<String> refused;

    RestrictedOffering(String offerings, String... refused) {
        this.offerings = offerings;
        this.refused = List.of(refused);
    }

    /** @return the ACL user standing for this offering's application */
    String user() {
        return "offering-" + name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Makes (or resets) the offering's user on {@code server}, for the keys and channels of its
     * test prefix, and returns the target whose connection factories log in as that user.
     */
    RedisTarget on(RedisServer server) {
        server.assumeOwned("ACL SETUSER");
        List<String> rule = new ArrayList<>(List.of("ACL", "SETUSER", user(), "reset", "on", ">" + PASSWORD,
                "~" + server.keyPrefix() + ":*", "resetchannels", "&" + server.keyPrefix() + ":*", "+@all"));
        rule.addAll(refused);
        server.adminCommand(rule.toArray(String[]::new));
        return new Target(new StandaloneTarget(server), server, user());
    }

    /**
     * Redis refused the offering's user nothing: the library sent none of the commands the offering
     * takes away. Lettuce's {@code CLIENT SETINFO} (its name and version, sent on every connection,
     * and its failure ignored) is left out: Redis 6.2 logs it as {@code client}, 7.2+ as
     * {@code client|setinfo}; 7.0 does not know it.
     */
    void assertRefusedNothing(RedisServer server) {
        List<Map<String, Object>> refusedHere = new ArrayList<>();
        for (Object entry : (List<?>) server.adminCommand("ACL", "LOG")) {
            List<?> fields = (List<?>) entry;
            Map<String, Object> map = new LinkedHashMap<>();
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                map.put(String.valueOf(fields.get(i)), fields.get(i + 1));
            }
            boolean lettuceClientInfo = "command".equals(map.get("reason"))
                    && ("client|setinfo".equals(map.get("object")) || "client".equals(map.get("object")));
            if (user().equals(map.get("username")) && !lettuceClientInfo) {
                refusedHere.add(map);
            }
        }
        assertThat(refusedHere).as("what Redis refused the user of %s", offerings).isEmpty();
    }

    @Override
    public String toString() {
        return name() + " (" + offerings + ")";
    }

    /** The server, with connection factories that log in as the offering's user. */
    private record Target(StandaloneTarget admin, RedisServer server, String user) implements RedisTarget {

        @Override
        public String keyPrefix() {
            return admin.keyPrefix();
        }

        @Override
        public RedisConnectionFactory newConnectionFactory() {
            return server.connectionFactory(user, PASSWORD);
        }

        @Override
        public List<String> keys(String pattern) {
            return admin.keys(pattern);
        }

        @Override
        public long pttl(String key) {
            return admin.pttl(key);
        }

        @Override
        public Map<String, Long> commandCalls() {
            return admin.commandCalls();
        }

        @Override
        public List<CommandMonitor> monitors() throws IOException {
            return admin.monitors();
        }

        @Override
        public long killPubSubClients() {
            return admin.killPubSubClients();
        }
    }
}
