package io.github.redissemaphore.observation;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.observation.DefaultSemaphoreObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreObservationContext;
import io.github.redissemaphore.core.observation.SemaphoreObservationConvention;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import brave.handler.MutableSpan;
import brave.test.TestSpanHandler;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.observation.LettuceObservationAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.brave.autoconfigure.BraveAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * An application as it runs in production: Boot's observation, metrics (Prometheus), tracing
 * (Brave, every trace sampled, spans kept in memory) and Lettuce command spans, on a real Redis.
 */
@RedisTest
class SemaphoreTracingTest {

    private static final Logger log = LoggerFactory.getLogger(SemaphoreTracingTest.class);

    private final ApplicationContextRunner runner;

    SemaphoreTracingTest(RedisServer server) {
        this.runner = StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class,
                        MetricsAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
                        MicrometerTracingAutoConfiguration.class, BraveAutoConfiguration.class,
                        LettuceObservationAutoConfiguration.class))
                .withBean(TestSpanHandler.class)
                .withBean(TracedService.class)
                .withPropertyValues("management.tracing.sampling.probability=1.0");
    }

    @Test
    void theWaitIsASpanOfItsOwnUnderTheRequestWithNothingUnderIt() {
        runner.run(context -> {
            ObservationRegistry observations = context.getBean(ObservationRegistry.class);
            TracedService service = context.getBean(TracedService.class);
            Observation.createNotStarted("request", observations).observe(() -> service.export("acme"));

            TestSpanHandler handler = context.getBean(TestSpanHandler.class);
            // A Redis command's span ends on Lettuce's I/O thread, a moment after its caller has the reply.
            await().until(() -> redisSpans(handler.spans()).size() >= 2 && handler.spans().stream()
                    .anyMatch(span -> "request".equals(span.name())));
            List<MutableSpan> spans = handler.spans();
            log.info("Span tree of one traced call:\n{}", tree(spans));
            MutableSpan request = only(spans, "request");
            MutableSpan acquire = only(spans, "acquire exports");
            MutableSpan hold = only(spans, "hold exports");
            assertThat(request.parentId()).isNull();
            assertThat(acquire.parentId()).isEqualTo(request.id());
            assertThat(acquire.tags()).containsEntry("name", "exports").containsEntry("outcome", "acquired")
                    .containsEntry("key", "acme");
            assertThat(hold.parentId()).isEqualTo(request.id());
            assertThat(hold.tags()).containsEntry("outcome", "released");
            assertThat(spans).as("parent of nothing")
                    .noneMatch(span -> acquire.id().equals(span.parentId()) || hold.id().equals(span.parentId()));
            // The acquire and the release command; Lettuce's connection set-up (HELLO, SUBSCRIBE) are
            // traces of their own.
            List<MutableSpan> redis = redisSpans(spans).stream()
                    .filter(span -> span.traceId().equals(request.traceId())).toList();
            assertThat(redis).hasSize(2).allSatisfy(span -> assertThat(span.parentId()).isEqualTo(request.id()));
            assertThat(spans).filteredOn(span -> span.traceId().equals(request.traceId())).hasSize(5);
        });
    }

    /**
     * A factory that lends a connection per call (no shared connection, as with a pool) has every
     * call lent on the registry's own threads, off the caller's: the Redis spans stay the caller's
     * children all the same, for the first call and the ones after it.
     */
    @Test
    void onAFactoryThatLendsAConnectionPerCallTheRedisSpansStayUnderTheRequest() {
        runner.withBean(NoSharedConnection.class).run(context -> {
            assertThat(context.getBean(LettuceConnectionFactory.class).getShareNativeConnection()).isFalse();
            ObservationRegistry observations = context.getBean(ObservationRegistry.class);
            TracedService service = context.getBean(TracedService.class);
            for (String tenant : List.of("acme", "globex")) {
                Observation.createNotStarted("request", observations).observe(() -> service.export(tenant));
            }

            TestSpanHandler handler = context.getBean(TestSpanHandler.class);
            List<MutableSpan> requests = await().until(() -> handler.spans().stream()
                    .filter(span -> "request".equals(span.name())).toList(), found -> found.size() == 2);
            for (MutableSpan request : requests) {
                // the acquire and the release command of that request, children of it
                await().untilAsserted(() -> assertThat(redisSpans(handler.spans()))
                        .filteredOn(span -> span.traceId().equals(request.traceId())).hasSize(2)
                        .allSatisfy(span -> assertThat(span.parentId()).isEqualTo(request.id())));
            }
        });
    }

    @Test
    void theAcquireTimerIsMadeOnceByTheObservationNamedByTheBaseName() {
        runner.run(context -> {
            TracedService service = context.getBean(TracedService.class);
            service.export("acme");
            service.export("globex");
            service.export("acme");
            Permit held = context.getBean(SemaphoreRegistry.class).semaphore("exports:initech").tryAcquire()
                    .orElseThrow();
            assertThatThrownBy(() -> service.export("initech")).isInstanceOf(SemaphoreRejectedException.class);
            held.release();

            MeterRegistry meters = context.getBean(MeterRegistry.class);
            Map<List<String>, Long> timers = meters.find("semaphore.acquire").timers().stream().collect(
                    Collectors.groupingBy(timer -> List.of(timer.getId().getTag("name"), timer.getId().getTag("outcome")),
                            Collectors.counting()));
            // 4 through the aspect, and the one taken directly: all under the base name
            assertThat(timers).isEqualTo(Map.of(List.of("exports", "acquired"), 1L, List.of("exports", "rejected"), 1L));
            assertThat(meters.get("semaphore.acquire").tags("name", "exports", "outcome", "acquired").timer().count())
                    .isEqualTo(4);

            String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
            List<String> ours = Arrays.stream(scrape.split("\n")).filter(line -> line.startsWith("semaphore_")).toList();
            log.info("curl .../actuator/prometheus | grep '^semaphore_':\n{}", String.join("\n", ours));
            assertThat(ours).filteredOn(line -> line.startsWith("semaphore_acquire_seconds_count{"))
                    .hasSize(2)
                    .anySatisfy(line -> assertThat(line).contains("name=\"exports\"", "outcome=\"acquired\"")
                            .endsWith(" 4"));
            assertThat(ours).anySatisfy(line -> assertThat(line)
                    .startsWith("semaphore_lease_lost_total{name=\"exports:acme\"}").endsWith(" 0.0"));
        });
    }

    @Test
    void aConventionBeanOfTheApplicationIsUsed() {
        runner.withBean(SemaphoreObservationConvention.class, TeamConvention::new).run(context -> {
            context.getBean(TracedService.class).export("acme");

            assertThat(only(context.getBean(TestSpanHandler.class).spans(), "acquire exports").tags())
                    .containsEntry("team", "billing");
            assertThat(context.getBean(MeterRegistry.class).get("semaphore.acquire").tag("team", "billing")
                    .timer().count()).isEqualTo(1);
        });
    }

    private static List<MutableSpan> redisSpans(List<MutableSpan> spans) {
        return spans.stream().filter(span -> "redis".equals(span.tag("db.system"))
                && !List.of("hello", "client", "subscribe").contains(span.name())).toList();
    }

    private static MutableSpan only(List<MutableSpan> spans, String name) {
        List<MutableSpan> named = spans.stream().filter(span -> name.equals(span.name())).toList();
        assertThat(named).as("spans named %s in %s", name, spans).hasSize(1);
        return named.get(0);
    }

    /** @return the spans as an indented tree, children in start order */
    private static String tree(List<MutableSpan> spans) {
        Map<String, MutableSpan> byId = spans.stream().collect(Collectors.toMap(MutableSpan::id, Function.identity()));
        StringBuilder out = new StringBuilder();
        spans.stream().filter(span -> span.parentId() == null || !byId.containsKey(span.parentId()))
                .forEach(root -> append(out, root, spans, 0));
        return out.toString();
    }

    private static void append(StringBuilder out, MutableSpan span, List<MutableSpan> spans, int depth) {
        out.append("  ".repeat(depth)).append(span.name())
                .append(" (").append((span.finishTimestamp() - span.startTimestamp()) / 1000.0).append(" ms)");
        if (!span.tags().isEmpty()) {
            out.append(' ').append(span.tags());
        }
        out.append('\n');
        spans.stream().filter(child -> span.id().equals(child.parentId()))
                .sorted(java.util.Comparator.comparingLong(MutableSpan::startTimestamp))
                .forEach(child -> append(out, child, spans, depth + 1));
    }

    /** The factory lends a connection per call, as a pooled one does. */
    static class NoSharedConnection implements BeanPostProcessor {

        @Override
        public Object postProcessBeforeInitialization(Object bean, String beanName) {
            if (bean instanceof LettuceConnectionFactory factory) {
                factory.setShareNativeConnection(false);
            }
            return bean;
        }
    }

    static class TracedService {

        @DistributedSemaphore(value = "exports", key = "#tenant")
        public String export(String tenant) {
            return "exported for " + tenant;
        }
    }

    static class TeamConvention extends DefaultSemaphoreObservationConvention {

        @Override
        public KeyValues getLowCardinalityKeyValues(SemaphoreObservationContext context) {
            return super.getLowCardinalityKeyValues(context).and("team", "billing");
        }
    }
}
