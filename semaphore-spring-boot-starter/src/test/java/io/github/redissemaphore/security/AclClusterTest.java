package io.github.redissemaphore.security;

import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.actuate.SemaphoresEndpoint.SemaphoreDescriptor;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.security.AclLeastPrivilegeTest.Guarded;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The rule of docs/operating.md with its cluster additions, on a 3-master Redis Cluster: the starter works as
 * the restricted user (sharded inbox, SPUBLISH hand-off, renewal, endpoint, runtime limits, a
 * lease adopted and released by id) and no node refuses any of its commands.
 */
@Tag("slow")
@RedisTest
class AclClusterTest {

    private static final String PASSWORD = "cluster-app-pw-9Xw3";
    private static final Pattern VERSION = Pattern.compile("redis_version:(\\d+)\\.");

    private final ExecutorService callers = Executors.newCachedThreadPool();

    /** The machine's scheduling noise while the test runs, which widens the bounds timed here. */
    private final SchedulingNoise noise = new SchedulingNoise();

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
        noise.close();
    }

    @Test
    void theClusterRuleCarriesTheStarterAndNoNodeRefusesAnything(RedisCluster cluster) {
        Matcher version = VERSION.matcher(cluster.nodes().get(0).info("server"));
        assumeThat(version.find() && Integer.parseInt(version.group(1)) >= 7)
                .as("sharded pub/sub (SPUBLISH, SSUBSCRIBE) needs Redis 7; this redis-server is older").isTrue();
        for (RedisServer node : cluster.nodes()) {
            node.adminCommand(AclRule.setUser("app", PASSWORD, "semaphore", true));
            node.adminCommand("ACL", "LOG", "RESET");
        }
        String seeds = cluster.nodes().stream().map(node -> node.host() + ":" + node.port())
                .collect(Collectors.joining(","));
        ApplicationContextRunner instance = SecuredContexts.runner()
                .withPropertyValues("spring.data.redis.cluster.nodes=" + seeds, "spring.data.redis.username=app",
                        "spring.data.redis.password=" + PASSWORD,
                        "distributed-semaphore.waiter-tick=10s",
                        "distributed-semaphore.waiter-heartbeat=30s",
                        "distributed-semaphore.semaphores.renewed.lease-time=1s",
                        "distributed-semaphore.semaphores.handoff.wait-time=20s",
                        "management.endpoints.web.exposure.include=semaphores",
                        "management.endpoint.semaphores.access=UNRESTRICTED")
                .withBean(Guarded.class).withBean(Renewals.class);
        RedisServer handOffNode = cluster.nodeFor("semaphore:{handoff}:state");
        List<String> clientsDuringTheRun = new ArrayList<>();

        instance.run(first -> instance.run(second -> {
            Guarded one = first.getBean(Guarded.class);
            Guarded two = second.getBean(Guarded.class);
            SemaphoresEndpoint endpoint = second.getBean(SemaphoresEndpoint.class);

            // renewal, the endpoint and a forced release
            Gate holding = new Gate();
            Future<String> holder = callers.submit(() -> one.renewed(holding));
            holding.awaitEntered(1);
            long entered = System.nanoTime(); // after the grant
            String permitId = ((SemaphoreDescriptor) endpoint.semaphore("renewed")).holders().get(0).holder().permitId();
            // Held past twice its 1 s lease, through renewals this instance heard come back: the
            // same lease is then held only because it was renewed.
            Renewals renewals = first.getBean(Renewals.class);
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                    .until(() -> renewals.of("renewed") >= 2
                            && Renewals.since(entered).compareTo(Duration.ofSeconds(2)) > 0);
            assertThat(((SemaphoreDescriptor) endpoint.semaphore("renewed")).holders())
                    .extracting(held -> held.holder().permitId()).as("the holders of 'renewed' after two lease times")
                    .containsExactly(permitId);
            assertThat(endpoint.release("renewed", permitId).released()).isTrue();
            holding.open();
            assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");

            // a hand-off through the sharded inbox
            long published = handOffNode.commandCalls().getOrDefault("spublish", 0L);
            Gate busy = new Gate();
            Future<String> first1 = callers.submit(() -> one.handOff(busy));
            busy.awaitEntered(1);
            Future<String> waiter = callers.submit(() -> two.handOff(null));
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> ((SemaphoreDescriptor) endpoint.semaphore("handoff")).waiters().size() == 1);
            long opened = System.nanoTime();
            busy.open();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            noise.assertTookLessThan("the hand-off through the sharded inbox", opened, System.nanoTime(),
                    Duration.ofSeconds(5));
            assertThat(first1.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(handOffNode.commandCalls().getOrDefault("spublish", 0L)).isGreaterThan(published);

            // a runtime limit set through the API and cleared through the endpoint (PERSIST, then the
            // TTL back, on the semaphore's node); a lease adopted by the other instance and released by id
            RedisSemaphore handOff = first.getBean(SemaphoreRegistry.class).semaphore("handoff");
            handOff.overrideLimit(2);
            assertThat(((SemaphoreDescriptor) endpoint.semaphore("handoff")).limitSource())
                    .isEqualTo(SemaphoreState.OVERRIDE);
            assertThat(((SemaphoreDescriptor) endpoint.limit("handoff", null, null, null, null)).limitSource())
                    .isEqualTo(SemaphoreState.CONFIGURED);
            assertThat(handOffNode.commandCalls()).containsKey("persist");
            Permit lease = handOff.tryAcquire().orElseThrow();
            RedisSemaphore elsewhere = second.getBean(SemaphoreRegistry.class).semaphore("handoff");
            assertThat(elsewhere.adopt(lease.id())).isPresent();
            assertThat(elsewhere.release(lease.id())).isTrue();
            assertThat(elsewhere.state().used()).isZero();

            for (RedisServer node : cluster.nodes()) {
                clientsDuringTheRun.addAll(SecuredContexts.clients(node));
            }
        }));

        // (one caught while it was being opened has run no command yet, and shows the default user)
        assertThat(clientsDuringTheRun).filteredOn(SecuredContexts::ranACommand).isNotEmpty()
                .allSatisfy(line -> assertThat(SecuredContexts.clientField(line, "user")).isEqualTo("app"))
                .anySatisfy(line -> assertThat(SecuredContexts.clientField(line, "ssub")).isEqualTo("1"));
        for (RedisServer node : cluster.nodes()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> SecuredContexts.clients(node).isEmpty());
            assertThat(SecuredContexts.refused(node)).as("commands node %s refused", node.port()).isEmpty();
        }
        assertThat(cluster.keys("*")).isNotEmpty().allSatisfy(key -> assertThat(key).startsWith("semaphore:"));
    }

}
