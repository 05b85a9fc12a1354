package io.github.redissemaphore.security;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreEndpointAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreMetricsAutoConfiguration;
import io.github.redissemaphore.test.RedisServer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import io.github.redissemaphore.starter.BootLine;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Application contexts of an application with the starter that logs in to Redis as a user of its
 * own, as {@code StarterContexts} builds them but configured with {@code spring.data.redis.host},
 * {@code port}, {@code username} and {@code password} (a {@code spring.data.redis.url} would win
 * over those), plus Boot's SSL bundles for the TLS tests.
 */
final class SecuredContexts {

    private SecuredContexts() {
    }

    /** @return a runner with Boot's Redis, AOP and SSL auto-configuration, ours, and no Redis address yet */
    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BootLine.REDIS_AUTO_CONFIGURATION, AopAutoConfiguration.class,
                        SslAutoConfiguration.class, DistributedSemaphoreAutoConfiguration.class,
                        DistributedSemaphoreMetricsAutoConfiguration.class,
                        DistributedSemaphoreEndpointAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.timeout=2s", "spring.data.redis.connect-timeout=2s");
    }

    /** @return the properties that log in to {@code server}'s plain port as {@code user} */
    static String[] loginTo(RedisServer server, String user, String password) {
        return new String[] {"spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
                "spring.data.redis.username=" + user, "spring.data.redis.password=" + password};
    }

    /** @return the entries of {@code ACL LOG} (newest first), each as its field map */
    static List<Map<String, Object>> aclLog(RedisServer server) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (Object entry : (List<?>) server.adminCommand("ACL", "LOG")) {
            List<?> fields = (List<?>) entry;
            Map<String, Object> map = new LinkedHashMap<>();
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                map.put(String.valueOf(fields.get(i)), fields.get(i + 1));
            }
            entries.add(map);
        }
        return entries;
    }

    /**
     * @return the entries of {@code ACL LOG} but Lettuce's {@code CLIENT SETINFO}: Lettuce sends
     *         it (library name and version) on every connection and carries on when it fails.
     *         Redis 7.0 answers it "unknown subcommand" before any ACL check, Redis 7.2+ refuses it
     *         as {@code client|setinfo} unless the rule has {@code +client|setinfo} (which Redis 7.0
     *         rejects), and Redis 6.2 logs it as {@code client}
     */
    static List<Map<String, Object>> refused(RedisServer server) {
        return aclLog(server).stream()
                .filter(entry -> !("command".equals(entry.get("reason"))
                        && ("client|setinfo".equals(entry.get("object")) || "client".equals(entry.get("object")))))
                .toList();
    }

    /**
     * @return the {@code CLIENT LIST} lines of every client but the admin connection that asks
     *         ({@code cmd=client|list} on Redis 7, {@code cmd=client} on 6.2) and the links of
     *         replicas ({@code flags=S})
     */
    static List<String> clients(RedisServer server) {
        return String.valueOf(server.adminCommand("CLIENT", "LIST")).lines()
                .filter(line -> !(line.contains(" user=default")
                        && (line.contains(" cmd=client|list ") || line.contains(" cmd=client "))))
                .filter(line -> !line.contains(" flags=S "))
                .toList();
    }

    /**
     * @return whether the client of a {@code CLIENT LIST} line has run a command: one that has not
     *         is still in its TLS handshake or before its {@code AUTH}/{@code HELLO}, and shows as
     *         {@code user=default} until then (on a loaded machine a listing can catch a connection
     *         being opened, or one whose failed handshake the server has not yet seen closed)
     */
    static boolean ranACommand(String line) {
        return !line.contains(" cmd=NULL ");
    }

    /** @return the value of {@code field} in a {@code CLIENT LIST} line */
    static String clientField(String line, String field) {
        for (String pair : line.split(" ")) {
            if (pair.startsWith(field + "=")) {
                return pair.substring(field.length() + 1);
            }
        }
        throw new IllegalArgumentException("no " + field + " in " + line);
    }
}
