package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.starter.StartupFailures;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedSemaphore} where no call can ever reach the aspect stops the start-up with a
 * report naming the method, why, and what to change: a private, static or final method, a final
 * class, a method an interface-based proxy does not expose, a bean the aspect does not advise.
 * {@code distributed-semaphore.unguardable-methods=warn} starts anyway with a WARN. Methods the
 * proxy does reach start and are guarded.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension.class)
class UnguardableMethodsTest {

    private static final String NL = System.lineSeparator();
    private static final String SWITCH =
            "Or, to start with it unguarded, set distributed-semaphore.unguardable-methods=warn.";

    private final RedisServer server;

    UnguardableMethodsTest(RedisServer server) {
        this.server = server;
    }

    @Test
    void aPrivateMethod(CapturedOutput output) {
        assertThat(report(output, PrivateMethod.class))
                .contains("@DistributedSemaphore cannot guard a method of bean 'unguardableMethodsTest.PrivateMethod' ("
                        + PrivateMethod.class.getName() + "): calls to it would run without a permit.")
                .contains("Method: " + PrivateMethod.class.getName() + ".quote(String)" + NL)
                .contains("Reason: it is private: calls to it never go through the bean's proxy")
                .contains(PrivateMethod.class.getName() + ".quote(String): make it public and call it on the bean "
                        + "from another bean.")
                .contains(SWITCH);
    }

    @Test
    void aStaticMethod(CapturedOutput output) {
        assertThat(report(output, StaticMethod.class))
                .contains("Method: " + StaticMethod.class.getName() + ".quote(String)" + NL)
                .contains("Reason: it is static: a proxy intercepts calls on the bean, never a static call")
                .contains("make it an instance method");
    }

    @Test
    void aFinalMethod(CapturedOutput output) {
        assertThat(report(output, FinalMethod.class))
                .contains("Method: " + FinalMethod.class.getName() + ".quote(String)" + NL)
                .contains("Reason: it is final: a class-based (CGLIB) proxy cannot override it")
                .contains("remove final from the method.")
                .as("a Java class needs no word on Kotlin").doesNotContain("Kotlin");
    }

    @Test
    void aPublicFinalMethodOfAnAnnotatedClass(CapturedOutput output) {
        assertThat(report(output, FinalMethodOfAnnotatedClass.class))
                .contains("Method: " + FinalMethodOfAnnotatedClass.class.getName() + ".quote(String)" + NL)
                .contains("Reason: it is final")
                .as("its other public method is guarded, its private one is not meant to be")
                .doesNotContain(".other(", ".helper(");
    }

    @Test
    void aFinalClassNoProxyCanSubclass(CapturedOutput output) {
        assertThat(report(output, FinalClass.class))
                .contains("@DistributedSemaphore cannot guard a method of bean 'unguardableMethodsTest.FinalClass' ("
                        + FinalClass.class.getName() + ")")
                .contains("Method: " + FinalClass.class.getName() + ".quote(String)" + NL)
                .contains("Reason: its class is final: a class-based (CGLIB) proxy cannot subclass it")
                .contains("remove final from FinalClass")
                .as("no switch makes a proxy possible").doesNotContain("unguardable-methods=warn");
    }

    @Test
    void aMethodAnInterfaceBasedProxyDoesNotExpose(CapturedOutput output) {
        assertThat(report(output, new Class<?>[] {NotOnInterface.class}, "--spring.aop.proxy-target-class=false"))
                .contains("Method: " + NotOnInterface.class.getName() + ".quote(String)" + NL)
                .contains("Reason: the bean is proxied through its interfaces (a JDK proxy) and none of them "
                        + "declares the method")
                .contains("declare the method on an interface the bean implements, or use class-based proxies")
                .as("the method the interface declares is guarded").doesNotContain(".price(");
    }

    @Test
    void aBeanTheAspectDoesNotAdvise(CapturedOutput output) {
        assertThat(report(output, new Class<?>[] {Guardable.class}, "--spring.aop.auto=false"))
                .contains("Method: " + Guardable.class.getName() + ".quote(String)" + NL)
                .contains("Reason: the bean is not advised by the DistributedSemaphore aspect")
                .contains("spring.aop.auto=false");
    }

    @Test
    void everyUnguardableMethodOfABeanIsReportedAtOnce(CapturedOutput output) {
        assertThat(report(output, Several.class))
                .contains("@DistributedSemaphore cannot guard 3 methods of bean")
                .contains("calls to them would run without a permit.")
                .contains("Method: " + Several.class.getName() + ".a()" + NL)
                .contains("Method: " + Several.class.getName() + ".b()" + NL)
                .contains("Method: " + Several.class.getName() + ".c()" + NL)
                .contains("Or, to start with them unguarded, set distributed-semaphore.unguardable-methods=warn.");
    }

    @Test
    void warnStartsAnywayAndSaysWhichMethodsRunUnguarded(CapturedOutput output) {
        try (ConfigurableApplicationContext context = StartupFailures.run(server,
                new Class<?>[] {PrivateMethod.class, FinalMethod.class},
                "--distributed-semaphore.unguardable-methods=warn")) {
            assertThat(output).contains(" WARN ").contains("@DistributedSemaphore cannot guard a method of bean "
                            + "'unguardableMethodsTest.PrivateMethod' (" + PrivateMethod.class.getName() + "): "
                            + PrivateMethod.class.getName() + ".quote(String): it is private")
                    .contains(FinalMethod.class.getName() + ".quote(String): it is final")
                    .contains("It runs unguarded, as distributed-semaphore.unguardable-methods=warn allows.");
            // as the WARN says: with the only permit taken, the final method runs all the same
            FinalMethod bean = context.getBean(FinalMethod.class);
            assertThat(runsWithoutAPermit(context, "unguardable", () -> bean.quote("x"))).isTrue();
        }
    }

    @Test
    void methodsTheProxyReachesStartAndAreGuarded() {
        try (ConfigurableApplicationContext context = StartupFailures.run(server,
                new Class<?>[] {Guardable.class, AnnotatedClassWithPrivateHelper.class})) {
            Guardable guardable = context.getBean(Guardable.class);
            assertThat(runsWithoutAPermit(context, "unguardable", () -> guardable.quote("x"))).isFalse();
            assertThat(runsWithoutAPermit(context, "unguardable", () -> guardable.packagePrivate())).isFalse();
            assertThat(runsWithoutAPermit(context, "unguardable", () -> guardable.inherited())).isFalse();
            AnnotatedClassWithPrivateHelper annotated = context.getBean(AnnotatedClassWithPrivateHelper.class);
            assertThat(runsWithoutAPermit(context, "unguardable", () -> annotated.quote("x"))).isFalse();
        }
    }

    @Test
    void anInterfaceBasedProxyGuardsTheMethodsItsInterfacesDeclare() {
        try (ConfigurableApplicationContext context = StartupFailures.run(server,
                new Class<?>[] {OnInterface.class}, "--spring.aop.proxy-target-class=false")) {
            Priced priced = context.getBean(Priced.class);
            assertThat(priced.getClass().getName()).as("a JDK proxy").contains("$Proxy");
            assertThat(runsWithoutAPermit(context, "unguardable", () -> priced.price("x"))).isFalse();
        }
    }

    private String report(CapturedOutput output, Class<?> bean) {
        return report(output, new Class<?>[] {bean});
    }

    private String report(CapturedOutput output, Class<?>[] beans, String... arguments) {
        return StartupFailures.failureReport(output, server, beans, arguments);
    }

    /**
     * @return true if {@code call} ran while this test held the only permit of {@code semaphore}
     *         (unguarded), false if it was refused for want of one (guarded)
     */
    static boolean runsWithoutAPermit(ConfigurableApplicationContext context, String semaphore, Supplier<?> call) {
        try (Permit held = context.getBean(SemaphoreRegistry.class).semaphore(semaphore).tryAcquire().orElseThrow()) {
            call.get();
            return true;
        } catch (SemaphoreRejectedException e) {
            return false;
        }
    }

    public static class PrivateMethod {

        public String quoteTwice(String item) {
            return quote(item) + quote(item);
        }

        @DistributedSemaphore("unguardable")
        private String quote(String item) {
            return item;
        }
    }

    public static class StaticMethod {

        @DistributedSemaphore("unguardable")
        public static String quote(String item) {
            return item;
        }
    }

    public static class FinalMethod {

        @DistributedSemaphore("unguardable")
        public final String quote(String item) {
            return item;
        }
    }

    @DistributedSemaphore("unguardable")
    public static class FinalMethodOfAnnotatedClass {

        public final String quote(String item) {
            return helper(item);
        }

        public String other() {
            return "other";
        }

        private String helper(String item) {
            return item;
        }
    }

    public static final class FinalClass {

        @DistributedSemaphore("unguardable")
        public String quote(String item) {
            return item;
        }
    }

    public interface Priced {

        String price(String item);
    }

    public static class NotOnInterface implements Priced {

        @Override
        @DistributedSemaphore("unguardable")
        public String price(String item) {
            return item;
        }

        @DistributedSemaphore("unguardable")
        public String quote(String item) {
            return item;
        }
    }

    public static class OnInterface implements Priced {

        @Override
        @DistributedSemaphore("unguardable")
        public String price(String item) {
            return item;
        }
    }

    public static class Base {

        @DistributedSemaphore("unguardable")
        public String inherited() {
            return "inherited";
        }
    }

    public static class Guardable extends Base {

        @DistributedSemaphore("unguardable")
        public String quote(String item) {
            return item;
        }

        @DistributedSemaphore("unguardable")
        String packagePrivate() {
            return "package-private";
        }
    }

    @DistributedSemaphore("unguardable")
    public static class AnnotatedClassWithPrivateHelper {

        public String quote(String item) {
            return helper(item);
        }

        private String helper(String item) {
            return item;
        }
    }

    public static class Several {

        @DistributedSemaphore("unguardable")
        private String a() {
            return "a";
        }

        @DistributedSemaphore("unguardable")
        public static String b() {
            return "b";
        }

        @DistributedSemaphore("unguardable")
        public final String c() {
            return a();
        }
    }
}
