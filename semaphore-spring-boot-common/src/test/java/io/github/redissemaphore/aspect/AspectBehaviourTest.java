package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** What {@code @DistributedSemaphore} does on plain (blocking) methods, one feature at a time. */
@RedisTest
class AspectBehaviourTest {

    private final ApplicationContextRunner runner;
    private final ExecutorService background = Executors.newCachedThreadPool();

    AspectBehaviourTest(RedisServer server) {
        this.runner = StarterContexts.on(server)
                .withPropertyValues("app.semaphore=class-level", "distributed-semaphore.semaphores.heavy.permits=3")
                .withBean(TenantExports.class).withBean(Inner.class).withBean(Outer.class)
                .withBean(ClassLevel.class).withBean(Patient.class).withBean(Misconfigured.class)
                .withBean(Failing.class);
    }

    @AfterEach
    void stopBackground() {
        background.shutdownNow();
    }

    @Test
    void aKeySplitsTheSemaphoreByArgument() {
        runner.run(context -> {
            TenantExports exports = context.getBean(TenantExports.class);
            Gate gate = new Gate();
            Future<String> acme = background.submit(() -> exports.byName("acme", gate));
            gate.awaitEntered(1);

            // another tenant is not blocked, the same tenant is (by name, by #p0 and by #a0)
            assertThat(exports.byName("globex", null)).isEqualTo("exported");
            assertThatThrownBy(() -> exports.byName("acme", null)).isInstanceOf(SemaphoreRejectedException.class)
                    .hasMessageContaining("'exports:acme'");
            assertThatThrownBy(() -> exports.byIndex("acme")).isInstanceOf(SemaphoreRejectedException.class);
            assertThatThrownBy(() -> exports.byAlias("acme")).isInstanceOf(SemaphoreRejectedException.class);
            assertThat(exports.byIndex("initech")).isEqualTo("exported");
            assertThat(used(context, "exports:acme")).isEqualTo(1);

            gate.open();
            assertThat(acme.get(30, TimeUnit.SECONDS)).isEqualTo("exported");
            assertThat(used(context, "exports:acme")).isZero();
        });
    }

    @Test
    void aNestedCallOnTheSameSemaphoreAndThreadTakesNoSecondPermit() {
        runner.run(context -> {
            // one permit, no wait: a second permit would be refused
            assertThat(context.getBean(Outer.class).nested()).as("permits used inside the nested call").isEqualTo(1);
            assertThat(used(context, "nested")).isZero();
        });
    }

    @Test
    void reentrancyIsPerThread() {
        runner.run(context -> assertThat(context.getBean(Outer.class).fromAnotherThread())
                .isInstanceOf(SemaphoreRejectedException.class));
    }

    @Test
    void aClassLevelAnnotationGuardsEveryPublicMethodAndTheMethodLevelOneWins() {
        runner.run(context -> {
            ClassLevel service = context.getBean(ClassLevel.class);
            // the name "${app.semaphore}" is resolved from the environment
            assertThat(service.first()).isEqualTo("class-level=1");
            assertThat(service.second()).isEqualTo("class-level=1");
            assertThat(service.methodLevel()).isEqualTo("class-level=0 method-level=1");
            assertThat(service.toString()).isEqualTo("not guarded: class-level=0");
        });
    }

    @Test
    void aWaitTimeOnTheAnnotationOverridesTheConfiguredOne() {
        runner.run(context -> {
            Patient patient = context.getBean(Patient.class);
            Gate gate = new Gate();
            Future<String> holder = background.submit(() -> patient.waitsLong(gate));
            gate.awaitEntered(1);

            // configured wait is 0, but this one waits in the queue
            Future<String> waiter = background.submit(() -> patient.waitsLong(null));
            await().until(() -> state(context, "patient").waiters().size() == 1);
            long start = System.nanoTime();
            assertThatThrownBy(patient::waitsBriefly).isInstanceOf(SemaphoreRejectedException.class)
                    .hasMessageContaining("within 150 ms");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));

            gate.open();
            assertThat(holder.get(30, TimeUnit.SECONDS)).isEqualTo("served");
            assertThat(waiter.get(30, TimeUnit.SECONDS)).isEqualTo("served");
        });
    }

    @Test
    void aCallTakesAsManyPermitsAsItSays() {
        runner.run(context -> assertThat(context.getBean(Patient.class).heavy()).isEqualTo(2));
    }

    @Test
    void thePermitGoesBackWhenTheMethodThrows() {
        runner.run(context -> {
            assertThatIllegalStateException().isThrownBy(() -> context.getBean(Failing.class).fail())
                    .withMessage("boom");
            assertThat(used(context, "failing")).isZero();
            assertThatIllegalStateException().isThrownBy(() -> context.getBean(Failing.class).fail());
        });
    }

    @Test
    void mistakesInTheAnnotationAreReportedWithTheAttributeAndTheMethod() {
        runner.run(context -> {
            Misconfigured service = context.getBean(Misconfigured.class);
            assertThatIllegalArgumentException().isThrownBy(() -> service.missingFallback("x"))
                    .withMessage("Invalid fallbackMethod of @DistributedSemaphore on Misconfigured.missingFallback"
                            + "(String): fallbackMethod 'nope' not found: " + Misconfigured.class.getName()
                            + " has no method nope(String) or nope(String, SemaphoreRejectedException)");
            assertThatIllegalArgumentException().isThrownBy(() -> service.fallbackOfAnotherType("x"))
                    .withMessageStartingWith("Invalid fallbackMethod of @DistributedSemaphore on "
                            + "Misconfigured.fallbackOfAnotherType(String): fallbackMethod 'number' returns "
                            + "java.lang.Integer");
            assertThatIllegalArgumentException().isThrownBy(service::badWaitTime)
                    .withMessage("Invalid waitTime of @DistributedSemaphore on Misconfigured.badWaitTime(): 'soon' "
                            + "is not a duration; use e.g. 500ms, 2s, 1m or PT2S");
            assertThatIllegalArgumentException().isThrownBy(service::negativeWaitTime)
                    .withMessageStartingWith("Invalid waitTime of @DistributedSemaphore on "
                            + "Misconfigured.negativeWaitTime(): waitTime must be between 0 ms and 24 h");
            assertThatIllegalArgumentException().isThrownBy(service::tooManyPermits)
                    .withMessage("Invalid permits of @DistributedSemaphore on Misconfigured.tooManyPermits(): "
                            + "permits must be between 1 and 1 (the semaphore's permits), but was 5");
            assertThatIllegalArgumentException().isThrownBy(service::badName)
                    .withMessageStartingWith("Invalid value of @DistributedSemaphore on Misconfigured.badName(): "
                            + "name must not contain '{', '}'");
            assertThatIllegalArgumentException().isThrownBy(service::unresolvableName)
                    .withMessageContaining("Misconfigured.unresolvableName()")
                    .withMessageContaining("missing.property");
            assertThatIllegalArgumentException().isThrownBy(service::future)
                    .withMessageContaining("Misconfigured.future()")
                    .withMessageContaining("cannot hold a permit until a java.util.concurrent.Future completes");
        });
    }

    @Test
    void theSemaphoreIsTakenBeforeTheTransactionBeginsAndGivenBackAfterItEnds() {
        runner.withUserConfiguration(TransactionConfiguration.class).run(context -> {
            context.getBean(TransactionalService.class).work();
            RecordingTransactionManager transactions = context.getBean(RecordingTransactionManager.class);
            assertThat(transactions.events).containsExactly("begin: 1 permit used", "commit: 1 permit used");
            assertThat(used(context, "tx")).isZero();
        });
    }

    @Test
    void theAspectOrderIsConfigurable() {
        runner.withUserConfiguration(InnerTransactionConfiguration.class)
                .withPropertyValues("distributed-semaphore.aspect-order=" + Ordered.LOWEST_PRECEDENCE)
                .run(context -> {
                    context.getBean(TransactionalService.class).work();
                    assertThat(context.getBean(RecordingTransactionManager.class).events)
                            .containsExactly("begin: 0 permit used", "commit: 0 permit used");
                });
    }

    private static int used(ApplicationContext context, String semaphore) {
        return state(context, semaphore).used();
    }

    private static SemaphoreState state(ApplicationContext context, String semaphore) {
        return context.getBean(SemaphoreRegistry.class).semaphore(semaphore).state();
    }

    static class TenantExports {

        @DistributedSemaphore(value = "exports", key = "#tenant")
        public String byName(String tenant, Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "exported";
        }

        @DistributedSemaphore(value = "exports", key = "#p0")
        public String byIndex(String tenant) {
            return "exported";
        }

        @DistributedSemaphore(value = "exports", key = "#a0")
        public String byAlias(String tenant) {
            return "exported";
        }
    }

    static class Inner {

        private final SemaphoreRegistry registry;

        Inner(SemaphoreRegistry registry) {
            this.registry = registry;
        }

        @DistributedSemaphore("nested")
        public int usedInside() {
            return registry.semaphore("nested").state().used();
        }
    }

    static class Outer {

        private final Inner inner;

        Outer(Inner inner) {
            this.inner = inner;
        }

        @DistributedSemaphore("nested")
        public int nested() {
            return inner.usedInside();
        }

        @DistributedSemaphore("nested")
        public Throwable fromAnotherThread() {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    inner.usedInside();
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            }).join();
        }
    }

    @DistributedSemaphore("${app.semaphore}")
    static class ClassLevel {

        private final SemaphoreRegistry registry;

        ClassLevel(SemaphoreRegistry registry) {
            this.registry = registry;
        }

        public String first() {
            return "class-level=" + used("class-level");
        }

        public String second() {
            return first();
        }

        @DistributedSemaphore("method-level")
        public String methodLevel() {
            return "class-level=" + used("class-level") + " method-level=" + used("method-level");
        }

        @Override
        public String toString() {
            return "not guarded: class-level=" + used("class-level");
        }

        private int used(String name) {
            return registry.semaphore(name).state().used();
        }
    }

    static class Patient {

        private final SemaphoreRegistry registry;

        Patient(SemaphoreRegistry registry) {
            this.registry = registry;
        }

        @DistributedSemaphore(value = "patient", waitTime = "20s")
        public String waitsLong(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "served";
        }

        @DistributedSemaphore(value = "patient", waitTime = "150ms")
        public String waitsBriefly() {
            return "served";
        }

        @DistributedSemaphore(value = "heavy", permits = 2)
        public int heavy() {
            return registry.semaphore("heavy").state().used();
        }
    }

    static class Failing {

        @DistributedSemaphore("failing")
        public void fail() {
            throw new IllegalStateException("boom");
        }
    }

    static class Misconfigured {

        @DistributedSemaphore(value = "bad", fallbackMethod = "nope")
        public String missingFallback(String argument) {
            return argument;
        }

        @DistributedSemaphore(value = "bad", fallbackMethod = "number")
        public String fallbackOfAnotherType(String argument) {
            return argument;
        }

        Integer number(String argument) {
            return 1;
        }

        @DistributedSemaphore(value = "bad", waitTime = "soon")
        public String badWaitTime() {
            return "never";
        }

        @DistributedSemaphore(value = "bad", waitTime = "-1s")
        public String negativeWaitTime() {
            return "never";
        }

        @DistributedSemaphore(value = "bad", permits = 5)
        public String tooManyPermits() {
            return "never";
        }

        @DistributedSemaphore("bad{name}")
        public String badName() {
            return "never";
        }

        @DistributedSemaphore("${missing.property}")
        public String unresolvableName() {
            return "never";
        }

        @DistributedSemaphore("bad")
        public Future<String> future() {
            return CompletableFuture.completedFuture("never");
        }
    }

    /** Records how many permits of semaphore "tx" are held when a transaction begins and ends. */
    static class RecordingTransactionManager extends AbstractPlatformTransactionManager {

        final List<String> events = new CopyOnWriteArrayList<>();
        private final SemaphoreRegistry registry;

        RecordingTransactionManager(SemaphoreRegistry registry) {
            this.registry = registry;
        }

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            record("begin");
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
            record("commit");
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
            record("rollback");
        }

        private void record(String event) {
            events.add(event + ": " + registry.semaphore("tx").state().used() + " permit used");
        }
    }

    static class TransactionalService {

        @Transactional
        @DistributedSemaphore("tx")
        public void work() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class TransactionConfiguration {

        @Bean
        RecordingTransactionManager transactionManager(SemaphoreRegistry registry) {
            return new RecordingTransactionManager(registry);
        }

        @Bean
        TransactionalService transactionalService() {
            return new TransactionalService();
        }
    }

    /** The transaction advice further out than the semaphore's, once the aspect order says so. */
    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = Ordered.LOWEST_PRECEDENCE - 10)
    static class InnerTransactionConfiguration {

        @Bean
        RecordingTransactionManager transactionManager(SemaphoreRegistry registry) {
            return new RecordingTransactionManager(registry);
        }

        @Bean
        TransactionalService transactionalService() {
            return new TransactionalService();
        }
    }
}
