package io.github.redissemaphore.security;

import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.actuate.SemaphoresEndpoint.SemaphoreDescriptor;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.security.AclLeastPrivilegeTest.Guarded;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisServers;
import io.github.redissemaphore.test.TestCertificates;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The starter on a {@code redis-server} that speaks TLS, with certificates made by the test,
 * configured the Spring Boot way (an SSL bundle that trusts the test CA,
 * {@code spring.data.redis.ssl.*}), logging in with username and password as a user that has only
 * the ACL rule of docs/operating.md. The server's plain port is left open for the test support's admin calls
 * only; every connection of the application is checked to arrive on the TLS port.
 */
@Tag("slow")
class TlsAuthTest {

    static final String PASSWORD = "tls-app-pw-Vb6k";

    private static TestCertificates certificates;
    private static RedisServer server;

    private final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeAll
    static void startTlsRedis() {
        certificates = TestCertificates.shared();
        server = startTlsRedis(certificates, AclRule.serverArguments("app", PASSWORD, "semaphore"));
    }

    /** Starts a TLS server, or skips the tests (saying why) when redis-server was built without TLS. */
    static RedisServer startTlsRedis(TestCertificates certificates, List<String> arguments) {
        try {
            return RedisServers.startTls(certificates, arguments);
        } catch (RedisServers.TlsUnsupportedException e) {
            Assumptions.abort("the redis-server at hand cannot serve TLS, so the TLS tests cannot run: "
                    + e.getMessage());
            throw e;
        }
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
    }

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    /** @return the properties of an SSL bundle named "redis" that trusts the test CA */
    static String[] trustingTheTestCa(TestCertificates certificates) {
        return new String[] {"spring.ssl.bundle.pem.redis.truststore.certificate=file:" + certificates.caCertificate(),
                "spring.data.redis.ssl.bundle=redis"};
    }

    @Test
    void theStarterWorksOverTlsLoggedInWithUsernameAndPassword() {
        ApplicationContextRunner instance = SecuredContexts.runner()
                .withPropertyValues(trustingTheTestCa(certificates))
                .withPropertyValues("spring.data.redis.ssl.enabled=true",
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + server.tlsPort(),
                        "spring.data.redis.username=app",
                        "spring.data.redis.password=" + PASSWORD,
                        "distributed-semaphore.waiter-tick=10s",
                        "distributed-semaphore.waiter-heartbeat=30s",
                        "distributed-semaphore.semaphores.handoff.wait-time=20s",
                        "management.endpoints.web.exposure.include=semaphores")
                .withBean(Guarded.class);
        List<String> clients = new ArrayList<>();
        instance.run(first -> instance.run(second -> {
            assertThat(first).hasNotFailed();
            Guarded one = first.getBean(Guarded.class);
            Guarded two = second.getBean(Guarded.class);
            assertThat(one.handOff(null)).isEqualTo("done");

            Gate busy = new Gate();
            Future<String> holder = callers.submit(() -> one.handOff(busy));
            busy.awaitEntered(1);
            Future<String> waiter = callers.submit(() -> two.handOff(null));
            SemaphoresEndpoint endpoint = first.getBean(SemaphoresEndpoint.class);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> ((SemaphoreDescriptor) endpoint.semaphore("handoff")).waiters().size() == 1);
            assertThat(((SemaphoreDescriptor) endpoint.semaphore("handoff")).used()).isEqualTo(1);
            busy.open();
            // woken by the inbox message, which travels over TLS as well: the tick is 10 s away
            assertThat(waiter.get(5, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(holder.get(5, TimeUnit.SECONDS)).isEqualTo("done");
            clients.addAll(SecuredContexts.clients(server));
        }));
        assertAllOnTheTlsPortAsApp(clients);
        assertThat(SecuredContexts.refused(server)).isEmpty();
    }

    @Test
    void theUrlFormWorksToo() {
        List<String> clients = new ArrayList<>();
        SecuredContexts.runner()
                .withPropertyValues(trustingTheTestCa(certificates))
                .withPropertyValues("spring.data.redis.url=rediss://app:" + PASSWORD + "@localhost:" + server.tlsPort())
                .withBean(Guarded.class)
                .run(context -> {
                    assertThat(context.getBean(Guarded.class).handOff(null)).isEqualTo("done");
                    assertThat(context.getBean(SemaphoreRegistry.class).semaphore("handoff").state().used()).isZero();
                    clients.addAll(SecuredContexts.clients(server));
                });
        assertAllOnTheTlsPortAsApp(clients);
    }

    @Test
    void aServerWhoseCertificateTheBundleDoesNotTrustIsRefused() {
        // TLS on, but trusting only the JDK's CAs: the test CA's server certificate is refused
        SecuredContexts.runner()
                .withPropertyValues("spring.data.redis.ssl.enabled=true", "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + server.tlsPort(), "spring.data.redis.username=app",
                        "spring.data.redis.password=" + PASSWORD)
                .run(context -> assertThatThrownBy(() ->
                        context.getBean(SemaphoreRegistry.class).semaphore("handoff").tryAcquire())
                        .isInstanceOf(SemaphoreUnavailableException.class));
        // no connection got through the handshake: none ever ran a command
        assertThat(SecuredContexts.clients(server)).noneMatch(SecuredContexts::ranACommand);
        assertThat(SecuredContexts.refused(server)).isEmpty();
    }

    private static void assertAllOnTheTlsPortAsApp(List<String> clients) {
        assertThat(clients).anyMatch(SecuredContexts::ranACommand).allSatisfy(line -> {
            assertThat(SecuredContexts.clientField(line, "laddr")).endsWith(":" + server.tlsPort());
            if (SecuredContexts.ranACommand(line)) {
                assertThat(SecuredContexts.clientField(line, "user")).isEqualTo("app");
            }
        });
    }
}
