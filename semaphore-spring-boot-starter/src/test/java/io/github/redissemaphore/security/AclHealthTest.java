package io.github.redissemaphore.security;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.health.DistributedSemaphoreHealthAutoConfiguration;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ACL rules of docs/operating.md, read from the page, against Spring Boot's health endpoint as
 * a readiness probe asks it: with the rule the page gives for Actuator ({@code +info}, which Boot's
 * Redis health indicator sends) the endpoint is UP and the semaphores work; with the least rule it
 * is DOWN, as the page says. Fails, never skips, without the page.
 */
class AclHealthTest {

    private static final Path PAGE = Path.of("..", "docs", "operating.md");
    private static final String WITH_HEALTH = "app";
    private static final String LEAST = "least";
    private static final String PASSWORD = "app-password";

    private static RedisServer server;

    @BeforeAll
    static void startRedisWithTheUsersOfThePage() throws IOException {
        List<List<String>> rules = documentedRules();
        assertThat(rules).as("the ACL SETUSER lines of %s", PAGE).hasSize(2);
        server = RedisServers.start();
        server.adminCommand(setUser(WITH_HEALTH, rules.get(1)));
        server.adminCommand(setUser(LEAST, rules.get(0)));
    }

    @AfterAll
    static void stopRedis() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void thePagesRulesDifferByInfoAlone() throws IOException {
        List<List<String>> rules = documentedRules();
        List<String> least = new ArrayList<>(rules.get(0));
        least.add("+info");
        assertThat(rules.get(1)).isEqualTo(least);
        assertThat(rules.get(0)).containsExactlyElementsOf(
                AclRule.rules(PASSWORD, "semaphore", false).stream().toList());
    }

    @Test
    void withTheRuleForActuatorTheHealthEndpointIsUpAndTheSemaphoresWork() {
        application(WITH_HEALTH).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Guarded.class).report()).isEqualTo("done");
            assertThat(context.getBean(HealthEndpoint.class).health().getStatus().getCode()).isEqualTo("UP");
            assertThat(context.getBean(HealthEndpoint.class).healthForPath("redis").getStatus().getCode())
                    .isEqualTo("UP");
        });
    }

    @Test
    void withTheLeastRuleBootsRedisIndicatorIsDownAsThePageSays() {
        application(LEAST).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Guarded.class).report()).isEqualTo("done");
            assertThat(context.getBean(HealthEndpoint.class).health().getStatus().getCode()).isEqualTo("DOWN");
        });
    }

    private static ApplicationContextRunner application(String user) {
        return SecuredContexts.runner()
                .withConfiguration(AutoConfigurations.of(DataRedisHealthContributorAutoConfiguration.class,
                        HealthContributorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
                        HealthEndpointAutoConfiguration.class, DistributedSemaphoreHealthAutoConfiguration.class))
                .withPropertyValues(SecuredContexts.loginTo(server, user, PASSWORD))
                .withBean(Guarded.class);
    }

    /** @return the rules of each {@code ACL SETUSER app} line of the page, in its order */
    private static List<List<String>> documentedRules() throws IOException {
        assertThat(PAGE).as("docs/operating.md of the project next to this module").isRegularFile();
        String prefix = "ACL SETUSER app ";
        return Files.readAllLines(PAGE, StandardCharsets.UTF_8).stream()
                .filter(line -> line.startsWith(prefix))
                .map(line -> Arrays.asList(line.substring(prefix.length()).trim().split(" +")))
                .toList();
    }

    private static String[] setUser(String user, List<String> rules) {
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user));
        command.addAll(rules);
        return command.toArray(String[]::new);
    }

    /** A guarded method, as an application has one. */
    static class Guarded {

        @DistributedSemaphore("reports")
        public String report() {
            return "done";
        }
    }
}
