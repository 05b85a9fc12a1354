package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.starter.StartupFailures;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A semaphore with {@code total-permits} is used per key only: {@code @DistributedSemaphore}
 * without a {@code key} on one stops the start-up with a report naming the method, the semaphore
 * and the property, and the two ways out; with a key, or on a semaphore without a cap, it starts.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension.class)
class CapWithoutKeyTest {

    private static final String NL = System.lineSeparator();
    private static final String CAP = "distributed-semaphore.semaphores.exports.total-permits";

    private final RedisServer server;
    private final ApplicationContextRunner runner;

    CapWithoutKeyTest(RedisServer server) {
        this.server = server;
        this.runner = StarterContexts.on(server).withPropertyValues(CAP + "=10");
    }

    @Test
    void aMethodWithoutAKeyNamesTheMethodTheSemaphoreAndTheProperty() {
        assertThat(analysis(Unkeyed.class))
                .contains("@DistributedSemaphore without a key uses a semaphore whose keys share a cap, on a method "
                        + "of bean 'capWithoutKeyTest.Unkeyed' (" + Unkeyed.class.getName() + ")")
                .contains("a semaphore with one is used per key only.")
                .contains("Method: " + Unkeyed.class.getName() + ".export(String)" + NL)
                .contains("Semaphore: exports" + NL)
                .contains("Property: " + CAP + NL)
                .contains(Unkeyed.class.getName() + ".export(String): add key = \"...\" to its @DistributedSemaphore"
                        + " (a SpEL expression over the arguments, such as key = \"#tenant\"), or remove " + CAP + ".")
                .as("its keyed method is fine").doesNotContain(".exportFor(");
    }

    @Test
    void everyPublicMethodOfAnAnnotatedClassIsNamed() {
        assertThat(analysis(UnkeyedClass.class))
                .contains("on 2 methods of bean")
                .contains("Method: " + UnkeyedClass.class.getName() + ".first()" + NL)
                .contains("Method: " + UnkeyedClass.class.getName() + ".second()" + NL)
                .as("its own annotation with a key wins").doesNotContain(".keyed(");
    }

    @Test
    void aPlaceholderInTheNameIsResolvedFirst() {
        assertThat(analysis(Placeholder.class, "app.semaphore=exports"))
                .contains("Semaphore: exports" + NL)
                .contains("Property: " + CAP + NL);
    }

    @Test
    void aNameThatNeedsBracketsKeepsThemInTheProperty() {
        assertThat(analysis(Bracketed.class, "distributed-semaphore.semaphores[api.exports].total-permits=10"))
                .contains("Semaphore: api.exports" + NL)
                .contains("Property: distributed-semaphore.semaphores[api.exports].total-permits" + NL);
    }

    @Test
    void theStartUpPrintsTheReport(CapturedOutput output) {
        assertThat(StartupFailures.failureReport(output, server, new Class<?>[] {Unkeyed.class}, "--" + CAP + "=10"))
                .contains("Method: " + Unkeyed.class.getName() + ".export(String)" + NL)
                .contains("Property: " + CAP + NL)
                .contains("or remove " + CAP + ".");
    }

    @Test
    void aWrongValueIsReportedAsSuchNotAsTheBeansFailure(CapturedOutput output) {
        assertThat(StartupFailures.failureReport(output, server, new Class<?>[] {Unkeyed.class}, "--" + CAP + "=0"))
                .contains("Property: " + CAP + NL)
                .contains("Reason: must be between 1 and 1000000; leave it out for no shared cap")
                .doesNotContain("Method: ");
        assertThat(StartupFailures.failureReport(output, server, new Class<?>[] {Unkeyed.class},
                "--distributed-semaphore.semaphores.exports.lease-time=soon"))
                .contains("Property: distributed-semaphore.semaphores.exports.lease-time" + NL)
                .doesNotContain("Method: ");
    }

    @Test
    void aKeyOrASemaphoreWithoutACapStarts() {
        runner.withBean(Keyed.class).withBean(Uncapped.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(SemaphoreRegistry.class).settingsOf("exports:acme").totalPermits())
                    .isEqualTo(10);
        });
        StarterContexts.on(server).withPropertyValues(CAP.replace("exports", "other") + "=10").withBean(Unkeyed.class)
                .run(context -> assertThat(context).as("the cap is another semaphore's").hasNotFailed());
    }

    /** @return the failure analysis of a start-up with {@code bean} and these properties, description and action */
    private String analysis(Class<?> bean, String... properties) {
        String[] report = {""};
        runner.withPropertyValues(properties).withBean(bean).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new CapWithoutKeyFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis).as("an analysis of %s", context.getStartupFailure()).isNotNull();
            report[0] = analysis.getDescription() + NL + "Action:" + NL + analysis.getAction();
        });
        return report[0];
    }

    public static class Unkeyed {

        @DistributedSemaphore("exports")
        public String export(String tenant) {
            return tenant;
        }

        @DistributedSemaphore(value = "exports", key = "#tenant")
        public String exportFor(String tenant) {
            return tenant;
        }
    }

    @DistributedSemaphore("exports")
    public static class UnkeyedClass {

        public void first() {
        }

        public void second() {
        }

        @DistributedSemaphore(value = "exports", key = "#tenant")
        public void keyed(String tenant) {
        }
    }

    public static class Placeholder {

        @DistributedSemaphore("${app.semaphore}")
        public void export() {
        }
    }

    public static class Bracketed {

        @DistributedSemaphore("api.exports")
        public void export() {
        }
    }

    public static class Keyed {

        @DistributedSemaphore(value = "exports", key = "#tenant")
        public String export(String tenant) {
            return tenant;
        }

        // a name with a ':' is one key of "exports" already
        @DistributedSemaphore("exports:nightly")
        public void nightly() {
        }
    }

    public static class Uncapped {

        @DistributedSemaphore("reports")
        public void report() {
        }
    }
}
