package io.github.redissemaphore.sample.live;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.sample.SampleHttp;
import io.github.redissemaphore.sample.SharedRedisApplicationTest;
import io.github.redissemaphore.sample.live.LiveState.CapKeyView;
import io.github.redissemaphore.sample.live.LiveState.CapSegment;
import io.github.redissemaphore.sample.live.LiveState.CapView;
import io.github.redissemaphore.sample.live.LiveState.HolderView;
import io.github.redissemaphore.sample.live.LiveState.SemaphoreView;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The live view's data over HTTP, with the sample's default settings: the page is served at
 * {@code /}, the state names this instance and the fleet, holders are attributed to the instance
 * that holds them (instances of one JVM are told apart in {@code LiveViewBrowserTest}), the force-release button is off while the endpoint is read-only, and bad
 * requests are refused naming the parameter.
 */
class LiveStateTest extends SharedRedisApplicationTest {

    @Autowired
    ApplicationContext context;

    @Autowired
    LiveStateReader reader;

    @Test
    void thePageIsServedAtTheRootWithItsScriptAndStyles() {
        SampleHttp http = SampleHttp.of(context);
        HttpResponse<String> page = http.get("/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("live.js", "live.css", "Fire reports");
        assertThat(http.get("/live.js").statusCode()).isEqualTo(200);
        assertThat(http.get("/live.css").statusCode()).isEqualTo(200);
    }

    @Test
    void theStateShowsThisInstanceAndNoForceReleaseWhileTheEndpointIsReadOnly() {
        await().atMost(Duration.ofSeconds(15)).until(() -> reader.read().instance() != null);
        LiveState state = reader.read();
        assertThat(state.instances()).extracting(FleetMember::name).contains(state.instance());
        assertThat(state.forceReleasePath()).as("read-only by default: no delete operation").isNull();
        assertThat(state.semaphores()).extracting(SemaphoreView::name)
                .containsExactly("reports", "payments", "exports:acme", "exports:globex", "exports:initech");
        assertThat(SampleHttp.of(context).get("/live/state").body()).contains("\"forceReleasePath\":null");
    }

    @Test
    void holdersShowTokenOwnerAndLeaseAndAreAttributedToTheInstanceOfTheirProcess() {
        await().atMost(Duration.ofSeconds(15)).until(() -> reader.read().instance() != null);
        String self = reader.read().instance();
        HttpResponse<String> held = SampleHttp.of(context).post("/live/holds?semaphore=exports:initech&seconds=10");
        assertThat(held.statusCode()).isEqualTo(200);
        LettuceConnectionFactory connections = redis().connectionFactory();
        try (SemaphoreRegistry outsider = SemaphoreRegistry.builder(connections)
                .keyPrefix(context.getEnvironment().getRequiredProperty("distributed-semaphore.key-prefix"))
                .build()) {
            Permit elsewhere = outsider.semaphore("reports").tryAcquire().orElseThrow();

            LiveState state = reader.read();
            HolderView mine = holderOf(state, "exports:initech");
            assertThat(held.body()).contains(mine.permitId());
            assertThat(mine.instance()).isEqualTo(self);
            assertThat(mine.leaseRemainingMillis()).isPositive();
            // the cap over all tenants shows it too, under its tenant
            CapView cap = state.exportCap();
            assertThat(cap).isNotNull();
            assertThat(cap.name()).isEqualTo("exports");
            assertThat(cap.limit()).isEqualTo(3);
            assertThat(cap.segments()).contains(new CapSegment("initech", self));
            assertThat(cap.keys()).contains(new CapKeyView("initech", 1, 0));
            // the queue's bound, by which the page marks a full queue
            assertThat(state.semaphores()).filteredOn(view -> view.name().equals("reports")).singleElement()
                    .satisfies(view -> assertThat(view.maxWaiters())
                            .isEqualTo(context.getBean(SemaphoreRegistry.class).settingsOf("reports").maxWaiters()));
            // the payments' rate, by which the page shows the window's use
            assertThat(state.semaphores()).filteredOn(view -> view.name().equals("payments")).singleElement()
                    .satisfies(view -> {
                        assertThat(view.rateLimit()).isEqualTo(10);
                        assertThat(view.ratePeriodMillis()).isEqualTo(1000);
                        assertThat(view.rateGrants()).isBetween(0, 10);
                    });
            HolderView theirs = holderOf(state, "reports");
            assertThat(theirs.permitId()).isEqualTo(elsewhere.id());
            assertThat(theirs.fencingToken()).isEqualTo(String.valueOf(elsewhere.fencingToken()));
            assertThat(theirs.owner()).endsWith("/" + ProcessHandle.current().pid() + "/" + Thread.currentThread().getName());
            assertThat(theirs.instance()).as("the only instance of this process").isEqualTo(self);
            elsewhere.release();
        } finally {
            connections.destroy();
        }
    }

    @Test
    void badRequestsAreRefusedNamingTheParameter() {
        SampleHttp http = SampleHttp.of(context);
        assertThat(http.post("/live/bursts/reports?calls=0").statusCode()).isEqualTo(400);
        HttpResponse<String> tooMany = http.post("/live/bursts/reports?calls=201");
        assertThat(tooMany.statusCode()).isEqualTo(400);
        assertThat(tooMany.body()).contains("calls must be between 1 and 200, but was 201");
        HttpResponse<String> unknownTenant = http.post("/live/bursts/exports?tenant=nobody");
        assertThat(unknownTenant.statusCode()).isEqualTo(400);
        assertThat(unknownTenant.body()).contains("tenant must be one of [acme, globex, initech], but was 'nobody'");
        HttpResponse<String> unknownSemaphore = http.post("/live/holds?semaphore=other");
        assertThat(unknownSemaphore.statusCode()).isEqualTo(400);
        assertThat(unknownSemaphore.body()).contains("semaphore must be one of");
    }

    private static HolderView holderOf(LiveState state, String semaphore) {
        return state.semaphores().stream().filter(view -> view.name().equals(semaphore)).findFirst().orElseThrow()
                .holders().get(0);
    }
}
