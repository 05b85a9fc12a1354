package io.github.redissemaphore.sample.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.sample.SampleHttp;
import io.github.redissemaphore.sample.SharedRedisApplicationTest;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;

/** The operations side a user of the sample relies on: health, the semaphores endpoint, Prometheus. */
class ActuatorExposureTest extends SharedRedisApplicationTest {

    @Autowired
    ApplicationContext context;

    @Test
    void healthSemaphoresAndPrometheusAreExposed() {
        SampleHttp http = SampleHttp.of(context);
        assertThat(http.post("/reports?title=warm-up").statusCode()).isEqualTo(200);

        HttpResponse<String> health = http.get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"");

        HttpResponse<String> semaphores = http.get("/actuator/semaphores");
        assertThat(semaphores.statusCode()).isEqualTo(200);
        assertThat(semaphores.body()).contains("reports");

        HttpResponse<String> prometheus = http.get("/actuator/prometheus");
        assertThat(prometheus.statusCode()).isEqualTo(200);
        assertThat(prometheus.body()).contains("semaphore_acquire", "name=\"reports\"");
    }
}
