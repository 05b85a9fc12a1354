package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * {@code replicas} above 0 on a Redis that refuses {@code WAIT} stops the start-up, not the first
 * call, with a failure report that names each property that asks for replicas as written, why the
 * server refuses {@code WAIT} and what to change: on a server without the command ("unknown
 * command", as ElastiCache Serverless and Redis Cloud's Essentials plans answer; made here with
 * {@code rename-command WAIT ""}), and for a user whose ACL refuses it (NOPERM, as Memorystore
 * answers commands it does not list).
 */
@ExtendWith(OutputCaptureExtension.class)
class ReplicasUnsupportedFailureReportTest {

    private static final String NL = System.lineSeparator();

    @Test
    void aServerWithoutWaitStopsTheStartNamingEachPropertyThatAsksForReplicas(CapturedOutput output) {
        try (RedisServer server = RedisServers.start(List.of("--rename-command", "WAIT", ""))) {
            String report = failureReport(output, "--spring.data.redis.url=" + server.uri(),
                    "--distributed-semaphore.key-prefix=" + server.keyPrefix(),
                    "--distributed-semaphore.semaphores.reports.replicas=1",
                    "--distributed-semaphore.semaphores[api.payments].replicas=2",
                    "--distributed-semaphore.semaphores.exports.permits=2");

            assertThat(report)
                    .contains("Grants of these semaphores wait for replicas to acknowledge them (Redis WAIT), but this"
                            + " Redis server has no WAIT command:")
                    .contains("Property: distributed-semaphore.semaphores.reports.replicas" + NL
                            + "    Value: \"1\"" + NL
                            + "    Origin: \"distributed-semaphore.semaphores.reports.replicas\" from property source"
                            + " \"commandLineArgs\"")
                    .contains("Property: distributed-semaphore.semaphores[api.payments].replicas" + NL
                            + "    Value: \"2\"")
                    // Redis 7 quotes the command 'WAIT', Redis 6.2 `WAIT`
                    .containsPattern("Redis: ERR unknown command ['`]WAIT['`]")
                    .contains("Set distributed-semaphore.semaphores[api.payments].replicas and"
                            + " distributed-semaphore.semaphores.reports.replicas to 0: this Redis server cannot wait"
                            + " for replicas")
                    .as("a semaphore without replicas is no part of it").doesNotContain("exports");
        }
    }

    @Test
    void aUserWhoseAclRefusesWaitIsToldToGrantItOrSetTheDefaultsToZero(CapturedOutput output) {
        try (RedisServer server = RedisServers.start(List.of("--user", "app", "on", ">app-pw-6Tg1",
                "~semaphore:*", "resetchannels", "&semaphore:*", "+@all", "-wait"))) {
            String report = failureReport(output, "--spring.data.redis.host=" + server.host(),
                    "--spring.data.redis.port=" + server.port(), "--spring.data.redis.username=app",
                    "--spring.data.redis.password=app-pw-6Tg1",
                    "--distributed-semaphore.defaults.replicas=1",
                    "--distributed-semaphore.semaphores.reports.permits=3");

            assertThat(report)
                    .contains("but the ACL of the Redis user does not allow WAIT:")
                    .contains("Property: distributed-semaphore.defaults.replicas" + NL + "    Value: \"1\"")
                    .contains("Redis: NOPERM")
                    .contains("Set distributed-semaphore.defaults.replicas to 0, or give the Redis user +set +wait"
                            + " (the ACL rule of docs/operating.md).")
                    .as("reports inherits the defaults: named once, as the defaults")
                    .doesNotContain("semaphores.reports.replicas");
        }
    }

    /** @return the failure report the application printed */
    private static String failureReport(CapturedOutput output, String... arguments) {
        SpringApplication application =
                new SpringApplication(InvalidPropertiesFailureReportTest.MinimalApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setBannerMode(Banner.Mode.OFF);
        assertThatException().isThrownBy(() -> application.run(arguments));
        String printed = output.toString();
        int report = printed.lastIndexOf("APPLICATION FAILED TO START");
        assertThat(report).as("a failure report in %s", printed).isNotNegative();
        return printed.substring(report);
    }
}
