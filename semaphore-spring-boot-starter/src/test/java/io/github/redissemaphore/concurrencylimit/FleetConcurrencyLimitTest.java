package io.github.redissemaphore.concurrencylimit;

import io.github.redissemaphore.autoconfigure.concurrencylimit.DistributedConcurrencyLimitAutoConfiguration;
import io.github.redissemaphore.autoconfigure.dropin.ConflictingLimitException;
import io.github.redissemaphore.autoconfigure.dropin.MissingLibrariesAutoConfiguration;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.starter.Witness;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.framework.Advised;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.resilience.InvocationRejectedException;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.resilience.annotation.ConcurrencyLimitBeanPostProcessor;
import org.springframework.resilience.annotation.EnableResilientMethods;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Spring Framework 7's {@code @ConcurrencyLimit} as its users write it, in two application instances
 * on one Redis: with {@code distributed-semaphore.concurrency-limit.enabled}, the limit holds across
 * both (with or without {@code @EnableResilientMethods}, the method guarded once); REJECT refuses at
 * once with Spring's exception, BLOCK waits up to the semaphore's wait-time; without the switch,
 * Spring's per-JVM limit, as without our starter.
 */
@RedisTest
class FleetConcurrencyLimitTest {

    private static final int LIMIT = 2;
    private static final int CALLERS = 12;
    private static final String ON = "distributed-semaphore.concurrency-limit.enabled=true";
    private static final String GENERATE = Reports.class.getName() + ".generate";
    private static final String BUSY = Reports.class.getName() + ".busy";
    private static final String SLOW = Reports.class.getName() + ".slow";

    private final RedisServer server;
    private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);

    FleetConcurrencyLimitTest(RedisServer server) {
        this.server = server;
    }

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void withTheSwitchNeverMoreInsideThanTheLimitAcrossBothInstances(boolean enableResilientMethods) throws Exception {
        Witness witness = new Witness(LIMIT);
        ApplicationContextRunner instance = instance(witness, enableResilientMethods).withPropertyValues(ON);
        instance.run(first -> instance.run(second -> {
            callFromBoth(first, second);
            System.out.printf("witness max, @ConcurrencyLimit, switch on, @EnableResilientMethods %s, two instances: %d%n",
                    enableResilientMethods, witness.max());
            assertThat(witness.max()).as("most calls inside at once, across both instances").isEqualTo(LIMIT);
            assertThat(witness.calls()).isEqualTo(CALLERS);
            SemaphoreRegistry semaphores = first.getBean(SemaphoreRegistry.class);
            await().untilAsserted(() -> assertThat(semaphores.inUse(GENERATE).orElseThrow().state().used()).isZero());
        }));
    }

    @Test
    void withoutTheSwitchSpringsLimitIsPerInstance() throws Exception {
        Witness witness = new Witness(2 * LIMIT);
        ApplicationContextRunner instance = instance(witness, true);
        instance.run(first -> instance.run(second -> {
            assertThat(first.getBean(ConcurrencyLimitBeanPostProcessor.class).getClass())
                    .isEqualTo(ConcurrencyLimitBeanPostProcessor.class);
            callFromBoth(first, second);
            System.out.printf("witness max, @ConcurrencyLimit, switch off, two instances: %d%n", witness.max());
            assertThat(witness.max()).as("Spring's limit is per JVM").isEqualTo(2 * LIMIT);
            assertThat(first.getBean(SemaphoreRegistry.class).inUse(GENERATE)).isEmpty();
        }));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void eachMethodIsGuardedOnceByOurAdviceAlone(boolean enableResilientMethods) {
        instance(new Witness(1), enableResilientMethods).withPropertyValues(ON).run(context -> {
            assertThat(context.getBean(DistributedConcurrencyLimitBeanPostProcessor.BEAN_NAME))
                    .isInstanceOf(DistributedConcurrencyLimitBeanPostProcessor.class);
            assertThat(context.getBeansOfType(ConcurrencyLimitBeanPostProcessor.class)).hasSize(1);
            Advised reports = (Advised) context.getBean(Reports.class);
            assertThat(Arrays.stream(reports.getAdvisors()).map(advisor -> advisor.getAdvice().getClass().getName()))
                    .filteredOn(advice -> advice.contains("Concurrency"))
                    .containsExactly(FleetConcurrencyLimitInterceptor.class.getName());
        });
    }

    @Test
    void rejectRefusesAtOnceWithSpringsExceptionWhileAnotherInstanceHoldsThePermit() {
        ApplicationContextRunner instance = instance(new Witness(1), false).withPropertyValues(ON);
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = callers.submit(() -> first.getBean(Reports.class).busy(gate));
            gate.awaitEntered(1);
            assertThatThrownBy(() -> second.getBean(Reports.class).busy(null))
                    .isInstanceOf(InvocationRejectedException.class)
                    .hasMessage("Concurrency limit reached: 1 - not allowed to enter " + BUSY + " (fleet-wide)");
            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(second.getBean(Reports.class).busy(null)).isEqualTo("done");
        }));
    }

    @Test
    void blockWaitsUpToTheSemaphoresWaitTime() {
        ApplicationContextRunner instance = instance(new Witness(1), false)
                .withPropertyValues(ON, "distributed-semaphore.semaphores[" + SLOW + "].wait-time=300ms");
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = callers.submit(() -> first.getBean(Reports.class).slow(gate));
            gate.awaitEntered(1);
            long started = System.nanoTime();
            assertThatThrownBy(() -> second.getBean(Reports.class).slow(null))
                    .isInstanceOf(InvocationRejectedException.class)
                    .hasMessage("Concurrency limit reached: 1 - no permit within PT0.3S for " + SLOW + " (fleet-wide)");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            // a waiter is served in the other instance as soon as the permit frees up
            Future<String> waiter = callers.submit(() -> second.getBean(Reports.class).slowWithoutBound());
            await().until(() -> first.getBean(SemaphoreRegistry.class).inUse(SLOW + "WithoutBound").isPresent()
                    || second.getBean(SemaphoreRegistry.class).inUse(SLOW + "WithoutBound").isPresent());
            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(waiter.get(30, TimeUnit.SECONDS)).isEqualTo("done");
        }));
    }

    @Test
    void anAnnotatedClassHasOneSemaphoreForAllItsMethodsItsLimitFromAPlaceholder() {
        ApplicationContextRunner instance = instance(new Witness(1), false)
                .withPropertyValues(ON, "exports.limit=1").withBean(Exports.class);
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holder = callers.submit(() -> first.getBean(Exports.class).first(gate));
            gate.awaitEntered(1);
            assertThatThrownBy(() -> second.getBean(Exports.class).second())
                    .isInstanceOf(InvocationRejectedException.class)
                    .hasMessage("Concurrency limit reached: 1 - not allowed to enter " + Exports.class.getName()
                            + " (fleet-wide)");
            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("first");
            assertThat(second.getBean(Exports.class).second()).isEqualTo("second");
        }));
    }

    @Test
    void aLimitThePropertiesContradictStopsTheStartUp() {
        instance(new Witness(1), true)
                .withPropertyValues(ON, "distributed-semaphore.semaphores[" + GENERATE + "].permits=5")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().isInstanceOf(ConflictingLimitException.class)
                        .hasMessage("Semaphore '" + GENERATE + "' is configured twice with different values: "
                                + "@ConcurrencyLimit(limit) of " + GENERATE + " = 2, but distributed-semaphore.semaphores["
                                + GENERATE + "].permits = 5"));
    }

    private ApplicationContextRunner instance(Witness witness, boolean enableResilientMethods) {
        ApplicationContextRunner runner = StarterContexts.on(server)
                .withConfiguration(AutoConfigurations.of(DistributedConcurrencyLimitAutoConfiguration.class,
                        MissingLibrariesAutoConfiguration.class))
                .withBean(Reports.class, () -> new Reports(witness));
        return enableResilientMethods ? runner.withUserConfiguration(ResilientMethods.class) : runner;
    }

    private void callFromBoth(ApplicationContext first, ApplicationContext second) throws Exception {
        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            Reports reports = (i % 2 == 0 ? first : second).getBean(Reports.class);
            calls.add(callers.submit(reports::generate));
        }
        for (Future<String> call : calls) {
            assertThat(call.get(120, TimeUnit.SECONDS)).isEqualTo("report");
        }
    }

    /** What an application writes to switch Spring's resilience annotations on. */
    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class ResilientMethods {
    }

    /** A class whose methods share one limit, written as a placeholder. */
    @ConcurrencyLimit(limitString = "${exports.limit}", policy = ConcurrencyLimit.ThrottlePolicy.REJECT)
    static class Exports {

        public String first(Gate gate) {
            gate.pass();
            return "first";
        }

        public String second() {
            return "second";
        }
    }

    /** The users' service, annotated as Spring's documentation writes it. */
    static class Reports {

        private final Witness witness;

        Reports(Witness witness) {
            this.witness = witness;
        }

        @ConcurrencyLimit(limit = LIMIT)
        public String generate() {
            witness.enter();
            try {
                witness.stay();
                return "report";
            } finally {
                witness.exit();
            }
        }

        @ConcurrencyLimit(limit = 1, policy = ConcurrencyLimit.ThrottlePolicy.REJECT)
        public String busy(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }

        @ConcurrencyLimit(limit = 1)
        public String slow(Gate gate) {
            return busy(gate);
        }

        @ConcurrencyLimit(limit = 1)
        public String slowWithoutBound() {
            return "done";
        }
    }
}
