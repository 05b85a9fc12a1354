package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.starter.StartupFailures;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.AopContext;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Scope;

import static io.github.redissemaphore.aspect.UnguardableMethodsTest.runsWithoutAPermit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What no start-up check can see, as the documentation tells it: a call from a bean to its own
 * method and a method of an object made with {@code new} never pass through the proxy, so they run
 * unguarded; each of Spring's usual remedies makes them guarded. "Guarded" is seen from outside:
 * with the only permit taken, a guarded call is refused, an unguarded one runs.
 */
@RedisTest
class WhatTheAnnotationCannotSeeTest {

    private static final String SEMAPHORE = "cannot-see";

    private final ConfigurableApplicationContext context;

    WhatTheAnnotationCannotSeeTest(RedisServer server) {
        this.context = StartupFailures.run(server,
                new Class<?>[] {ExposeProxy.class, Reports.class, ReportsClient.class, Export.class});
    }

    @AfterEach
    void close() {
        context.close();
    }

    @Test
    void aCallFromTheBeanToItselfRunsUnguarded() {
        Reports reports = context.getBean(Reports.class);
        assertThat(runsWithoutAPermit(context, SEMAPHORE, reports::generate)).as("called on the bean").isFalse();
        assertThat(runsWithoutAPermit(context, SEMAPHORE, reports::selfInvoked)).as("called from the bean").isTrue();
    }

    @Test
    void remedyALazyReferenceToItself() {
        Reports reports = context.getBean(Reports.class);
        assertThat(runsWithoutAPermit(context, SEMAPHORE, reports::throughLazySelf)).isFalse();
    }

    @Test
    void remedyTheCurrentProxyWithExposeProxy() {
        Reports reports = context.getBean(Reports.class);
        assertThat(runsWithoutAPermit(context, SEMAPHORE, reports::throughCurrentProxy)).isFalse();
    }

    @Test
    void remedyTheMethodOnAnotherBean() {
        ReportsClient client = context.getBean(ReportsClient.class);
        assertThat(runsWithoutAPermit(context, SEMAPHORE, client::report)).isFalse();
    }

    @Test
    void anObjectMadeWithNewRunsUnguardedOneSpringMakesIsGuarded() {
        assertThat(runsWithoutAPermit(context, SEMAPHORE, () -> new Export("acme").run())).as("made with new").isTrue();
        Export fromSpring = context.getBeanProvider(Export.class).getObject("acme");
        assertThat(runsWithoutAPermit(context, SEMAPHORE, fromSpring::run)).as("made by Spring").isFalse();
    }

    /** The application's own switch: {@code AopContext.currentProxy()} works only with it. */
    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy(exposeProxy = true)
    static class ExposeProxy {
    }

    public static class Reports {

        @Autowired
        @Lazy
        private Reports self;

        @DistributedSemaphore(SEMAPHORE)
        public String generate() {
            return "report";
        }

        /** The limitation: a plain call to its own method does not go through the proxy. */
        public String selfInvoked() {
            return generate();
        }

        /** Remedy: a lazy reference to itself, which is the proxy. */
        public String throughLazySelf() {
            return self.generate();
        }

        /** Remedy: the proxy the current call came through; needs {@code exposeProxy = true}. */
        public String throughCurrentProxy() {
            return ((Reports) AopContext.currentProxy()).generate();
        }
    }

    /** Remedy: the guarded method on another bean, which calls it through the proxy. */
    public static class ReportsClient {

        private final Reports reports;

        public ReportsClient(Reports reports) {
            this.reports = reports;
        }

        public String report() {
            return reports.generate();
        }
    }

    /** One object per call, as {@code new Export(tenant)} would make it; Spring makes it as a prototype bean. */
    @Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
    public static class Export {

        private final String tenant;

        public Export(String tenant) {
            this.tenant = tenant;
        }

        @DistributedSemaphore(SEMAPHORE)
        public String run() {
            return "exported for " + tenant;
        }
    }
}
