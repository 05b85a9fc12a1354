package io.github.redissemaphore.security;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.BootLine;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What an operator reads at Spring Boot's default log levels (an application started as a user
 * would, Boot's logging set up by {@link SpringApplication}) when Redis refuses the library
 * something: the cause of every {@link SemaphoreUnavailableException} a caller hears is one WARN
 * with its full message, not one per call; a refused inbox channel is one WARN, with no stack trace
 * of Spring's listener container at each try to subscribe again.
 */
@Tag("slow")
@ExtendWith(OutputCaptureExtension.class)
class UnavailableCauseLogTest {

    private static final String NO_ZADD = "no-zadd-app";
    private static final String NO_ZADD_PASSWORD = "no-zadd-pw-8Hs2";
    private static final String NO_CHANNEL = "no-channel-app";
    private static final String NO_CHANNEL_PASSWORD = "no-channel-pw-5Lq7";

    private static RedisServer server;

    @BeforeAll
    static void startRedisWithTwoUsersOfIncompleteRules() {
        List<String> withoutZadd = new ArrayList<>(AclRule.COMMANDS);
        withoutZadd.remove("zadd");
        List<String> arguments = new ArrayList<>(AclRule.serverArguments(NO_ZADD, NO_ZADD_PASSWORD, "semaphore",
                withoutZadd));
        List<String> withoutChannels = new ArrayList<>(AclRule.serverArguments(NO_CHANNEL, NO_CHANNEL_PASSWORD,
                "semaphore"));
        withoutChannels.remove("&semaphore:*");
        arguments.addAll(withoutChannels);
        server = RedisServers.start(arguments);
    }

    @AfterAll
    static void stopRedis() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void everyCallFailsButTheCauseIsOneWarnWithTheWholeMessage(CapturedOutput output) {
        try (ConfigurableApplicationContext app = start(NO_ZADD, NO_ZADD_PASSWORD)) {
            Guarded guarded = app.getBean(Guarded.class);
            for (int call = 0; call < 5; call++) {
                assertThatThrownBy(guarded::report).isInstanceOf(SemaphoreUnavailableException.class)
                        .hasMessageContaining("+zadd is one of the commands it lists");
            }
            List<String> warnings = lines(output, " WARN ", "is unavailable to its callers");
            assertThat(warnings).as("WARN lines about the unavailable semaphore in:\n%s", output).hasSize(1);
            assertThat(warnings.get(0)).contains("Semaphore 'reports'", "The ACL of the Redis user refused",
                    "ZADD", "+zadd is one of the commands it lists");
        }
    }

    @Test
    void aRefusedInboxChannelIsOneWarnAndNoStackTraceASecond(CapturedOutput output) {
        try (ConfigurableApplicationContext app = start(NO_CHANNEL, NO_CHANNEL_PASSWORD)) {
            // the inbox has been refused and has tried again at least twice
            await().atMost(Duration.ofSeconds(30)).until(() -> refusedSubscriptions() >= 3);
            assertThat(app.getBean(Guarded.class).report()).isEqualTo("done");

            assertThat(lines(output, " WARN ", "refuses this JVM its inbox channel"))
                    .as("WARN lines about the inbox in:\n%s", output).hasSize(1);
            assertThat(output.toString()).doesNotContain("SubscriptionTask aborted", " ERROR ");
        }
    }

    /** @return how often Redis refused this server's users a channel, as ACL LOG counts it */
    private static long refusedSubscriptions() {
        return SecuredContexts.aclLog(server).stream()
                .filter(entry -> "channel".equals(entry.get("reason")))
                .mapToLong(entry -> Long.parseLong(String.valueOf(entry.get("count"))))
                .sum();
    }

    private static List<String> lines(CapturedOutput output, String... parts) {
        return Arrays.stream(output.toString().split("\\R"))
                .filter(line -> Arrays.stream(parts).allMatch(line::contains))
                .toList();
    }

    private static ConfigurableApplicationContext start(String user, String password) {
        SpringApplication application = new SpringApplication(GuardedApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        List<String> arguments = new ArrayList<>(Arrays.stream(SecuredContexts.loginTo(server, user, password))
                .map(property -> "--" + property).toList());
        arguments.add("--spring.data.redis.timeout=2s");
        return application.run(arguments.toArray(String[]::new));
    }

    @Configuration(proxyBeanMethods = false)
    @BootLine.ImportRedisAutoConfiguration
    @ImportAutoConfiguration({AopAutoConfiguration.class, DistributedSemaphoreAutoConfiguration.class})
    static class GuardedApplication {

        @Bean
        Guarded guarded() {
            return new Guarded();
        }
    }

    /** A guarded method, as an application has one. */
    static class Guarded {

        @DistributedSemaphore("reports")
        public String report() {
            return "done";
        }
    }
}
