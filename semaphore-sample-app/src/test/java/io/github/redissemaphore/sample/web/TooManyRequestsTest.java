package io.github.redissemaphore.sample.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.sample.SampleHttp;
import io.github.redissemaphore.sample.SharedRedisApplicationTest;
import io.github.redissemaphore.sample.exports.ExportService;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

/**
 * The export endpoint's contract over real HTTP: while another instance holds a tenant's export
 * permits, that tenant gets 429 with a problem body naming the reason once its wait is over (the
 * sample's 10 s, none here: the answer is the same after any wait), and no Retry-After: the sample
 * configures none, and a wait that ran out predicts nothing; other tenants are unaffected; once
 * the permits are released the tenant is served again.
 */
@TestPropertySource(properties = "distributed-semaphore.semaphores.exports.wait-time=0s")
class TooManyRequestsTest extends SharedRedisApplicationTest {

    @Autowired
    ApplicationContext context;

    /** A second member of the fleet: a registry of its own, on connections of its own, same keys. */
    LettuceConnectionFactory otherInstanceConnections;
    SemaphoreRegistry otherInstance;

    @BeforeEach
    void startOtherInstance() {
        otherInstanceConnections = redis().connectionFactory();
        otherInstance = SemaphoreRegistry.builder(otherInstanceConnections)
                .keyPrefix(context.getEnvironment().getRequiredProperty("distributed-semaphore.key-prefix"))
                // as the fleet configures it: 2 per tenant, 3 of all tenants together
                .configure(ExportService.SEMAPHORE, context.getBean(SemaphoreRegistry.class)
                        .settingsOf(ExportService.SEMAPHORE))
                .build();
    }

    @AfterEach
    void stopOtherInstance() {
        otherInstance.close();
        otherInstanceConnections.destroy();
    }

    @Test
    void aBusyTenantGets429NamingTheReasonUntilThePermitIsBack() throws InterruptedException {
        SampleHttp http = SampleHttp.of(context);
        Permit held = otherInstance.semaphore("exports:acme").tryAcquire(2, Duration.ZERO).orElseThrow();

        HttpResponse<String> refused = http.post("/tenants/acme/exports");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).as("none configured, nothing predicted").isEmpty();
        assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(refused.body()).contains("\"status\":429", "\"semaphore\":\"exports:acme\"",
                "\"reason\":\"wait-timed-out\"");

        assertThat(http.post("/tenants/globex/exports").statusCode())
                .as("another tenant exports meanwhile, on the third permit of the cap").isEqualTo(200);

        held.release();
        HttpResponse<String> served = http.post("/tenants/acme/exports");
        assertThat(served.statusCode()).isEqualTo(200);
        assertThat(served.body()).contains("\"tenant\":\"acme\"");
    }

    @Test
    void aTenantThatCannotNameASemaphoreIsABadRequest() {
        assertThat(SampleHttp.of(context).post("/tenants/a%20b/exports").statusCode()).isEqualTo(400);
    }
}
