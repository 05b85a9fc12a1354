package io.github.redissemaphore.actuate;

import io.github.redissemaphore.starter.Gate;

import java.net.http.HttpResponse;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint over HTTP once the application grants it unrestricted access: forced release works. */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
        "management.endpoints.web.exposure.include=semaphores",
        "management.endpoint.semaphores.access=unrestricted",
        "distributed-semaphore.key-prefix=${redis.test.key-prefix}:endpoint-unrestricted"})
class SemaphoresEndpointUnrestrictedWebTest extends EndpointWebTestBase {

    @Test
    void deleteForcesTheReleaseOfAPermit() throws Exception {
        Gate gate = new Gate();
        Future<String> holder = callers.submit(() -> service.hold(gate));
        gate.awaitEntered(1);
        HttpResponse<String> details = EndpointTestApplication.send("GET", port, "/actuator/semaphores/endpoint-demo");
        String permitId = JsonPath.read(details.body(), "$.holders[0].permitId");

        HttpResponse<String> delete = EndpointTestApplication.send("DELETE", port,
                "/actuator/semaphores/endpoint-demo/" + permitId);
        assertThat(delete.statusCode()).isEqualTo(200);
        assertThat(JsonPath.<Boolean>read(delete.body(), "$.released")).isTrue();
        assertThat(registry.semaphore("endpoint-demo").state().used()).isZero();

        HttpResponse<String> again = EndpointTestApplication.send("DELETE", port,
                "/actuator/semaphores/endpoint-demo/" + permitId);
        assertThat(JsonPath.<Boolean>read(again.body(), "$.released")).isFalse();

        gate.open();
        assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");
    }

    @Test
    void deleteOnAnUnknownSemaphoreReleasesNothing() throws Exception {
        HttpResponse<String> delete = EndpointTestApplication.send("DELETE", port, "/actuator/semaphores/never-used/abc");
        assertThat(delete.statusCode()).isEqualTo(200);
        assertThat(JsonPath.<Boolean>read(delete.body(), "$.released")).isFalse();
        assertThat(registry.semaphores()).noneMatch(semaphore -> semaphore.name().equals("never-used"));
    }
}
