package io.github.redissemaphore.resilience4j;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.starter.Witness;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.bulkhead.annotation.Bulkhead;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two application instances on one Redis, each with {@code @Bulkhead(name = ...)} as its users write
 * it and {@code max-concurrent-calls: 2}, and a witness inside the method: with the switch on, never
 * more than 2 inside across both, for blocking, {@code CompletionStage} and Reactor results; without
 * it, Resilience4j's per-JVM limit, so 4.
 */
@RedisTest
class FleetBulkheadTwoInstancesTest {

    private static final int LIMIT = 2;
    private static final int CALLERS = 12;

    private final RedisServer server;
    private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
    /** Completes the asynchronous calls: their permits are released on its threads, not the callers'. */
    private final ExecutorService completers = Executors.newFixedThreadPool(4);

    FleetBulkheadTwoInstancesTest(RedisServer server) {
        this.server = server;
    }

    @AfterEach
    void stopThreads() {
        callers.shutdownNow();
        completers.shutdownNow();
    }

    /** How the users' method returns its result. */
    enum Result {
        BLOCKING("reports", Reports::generate),
        COMPLETION_STAGE("reports-async", reports -> reports.generateAsync().join()),
        REACTOR("reports-reactive", reports -> reports.generateReactive().block());

        final String bulkhead;
        final Function<Reports, String> call;

        Result(String bulkhead, Function<Reports, String> call) {
            this.bulkhead = bulkhead;
            this.call = call;
        }
    }

    @ParameterizedTest
    @EnumSource(Result.class)
    void withTheSwitchNeverMoreInsideThanTheLimitAcrossBothInstances(Result result) throws Exception {
        Witness witness = new Witness(LIMIT);
        ApplicationContextRunner instance = instance(witness).withPropertyValues(Resilience4jContexts.ON);
        instance.run(first -> instance.run(second -> {
            assertThat(first.getBean(BulkheadRegistry.class).bulkhead(result.bulkhead)).isInstanceOf(FleetBulkhead.class);
            callFromBoth(first, second, result);
            System.out.printf("witness max, @Bulkhead %s, switch on, two instances: %d%n", result, witness.max());
            assertThat(witness.max()).as("most calls inside at once, across both instances").isEqualTo(LIMIT);
            assertThat(witness.calls()).isEqualTo(CALLERS);
            SemaphoreRegistry semaphores = first.getBean(SemaphoreRegistry.class);
            await().untilAsserted(() -> assertThat(semaphores.inUse(result.bulkhead).orElseThrow().state().used()).isZero());
        }));
    }

    @ParameterizedTest
    @EnumSource(Result.class)
    void withoutTheSwitchEachInstanceHasItsOwnLimit(Result result) throws Exception {
        Witness witness = new Witness(2 * LIMIT);
        ApplicationContextRunner instance = instance(witness);
        instance.run(first -> instance.run(second -> {
            assertThat(first.getBean(BulkheadRegistry.class).bulkhead(result.bulkhead))
                    .isNotInstanceOf(FleetBulkhead.class);
            callFromBoth(first, second, result);
            System.out.printf("witness max, @Bulkhead %s, switch off, two instances: %d%n", result, witness.max());
            assertThat(witness.max()).as("Resilience4j's limit is per JVM").isEqualTo(2 * LIMIT);
        }));
    }

    private ApplicationContextRunner instance(Witness witness) {
        String[] properties = new String[Result.values().length * 2];
        for (Result result : Result.values()) {
            String prefix = "resilience4j.bulkhead.instances." + result.bulkhead;
            properties[result.ordinal() * 2] = prefix + ".max-concurrent-calls=" + LIMIT;
            properties[result.ordinal() * 2 + 1] = prefix + ".max-wait-duration=60s";
        }
        return Resilience4jContexts.on(server).withPropertyValues(properties)
                .withBean(Reports.class, () -> new Reports(witness, completers));
    }

    private void callFromBoth(ApplicationContext first, ApplicationContext second, Result result) throws Exception {
        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            Reports reports = (i % 2 == 0 ? first : second).getBean(Reports.class);
            calls.add(callers.submit(() -> result.call.apply(reports)));
        }
        for (Future<String> call : calls) {
            assertThat(call.get(120, TimeUnit.SECONDS)).isEqualTo("report");
        }
    }

    /** The users' service, annotated as Resilience4j's documentation writes it. */
    static class Reports {

        private final Witness witness;
        private final ExecutorService completer;

        Reports(Witness witness, ExecutorService completer) {
            this.witness = witness;
            this.completer = completer;
        }

        @Bulkhead(name = "reports")
        public String generate() {
            witness.enter();
            try {
                witness.stay();
                return "report";
            } finally {
                witness.exit();
            }
        }

        @Bulkhead(name = "reports-async")
        public CompletableFuture<String> generateAsync() {
            witness.enter();
            return CompletableFuture.supplyAsync(() -> {
                try {
                    witness.stay();
                    return "report";
                } finally {
                    witness.exit();
                }
            }, completer);
        }

        @Bulkhead(name = "reports-reactive")
        public Mono<String> generateReactive() {
            return Mono.fromCallable(() -> {
                witness.enter();
                try {
                    witness.stay();
                    return "report";
                } finally {
                    witness.exit();
                }
            }).subscribeOn(Schedulers.boundedElastic());
        }
    }
}
