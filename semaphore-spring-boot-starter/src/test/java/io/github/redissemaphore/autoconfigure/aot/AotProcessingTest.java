package io.github.redissemaphore.autoconfigure.aot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreEndpointAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreMetricsAutoConfiguration;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.core.SemaphoreRejectedException;

import java.lang.reflect.Method;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles.Kind;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import io.github.redissemaphore.starter.BootLine;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.javapoet.ClassName;
import org.springframework.util.ReflectionUtils;

/**
 * An application with the starter through Spring's ahead-of-time processing, the step a GraalVM
 * native build starts from: the auto-configuration is processed, and the hints it produces hold
 * the scripts, the starter's reflective types and the application's guarded methods with their
 * fallbacks. Processing creates no bean, so no Redis is needed; the sample app runs an
 * AOT-processed build against Redis.
 */
class AotProcessingTest {

    private static final ReflectionHintsPredicates REFLECTION = RuntimeHintsPredicates.reflection();

    /** Processed once for all tests: processing starts much of Spring Boot, seconds on a busy machine. */
    private static final InMemoryGeneratedFiles FILES = new InMemoryGeneratedFiles();
    private static RuntimeHints hints;

    @BeforeAll
    static void processAheadOfTime() {
        hints = process(FILES);
    }

    @Test
    void theStarterIsProcessedAndItsHintsReachTheApplication() {
        List<Class<?>> autoConfigurations = List.of(DistributedSemaphoreAutoConfiguration.class,
                DistributedSemaphoreMetricsAutoConfiguration.class, DistributedSemaphoreEndpointAutoConfiguration.class);
        for (Class<?> autoConfiguration : autoConfigurations) {
            String source = autoConfiguration.getName().replace('.', '/') + "__BeanDefinitions.java";
            assertThat(FILES.getGeneratedFile(Kind.SOURCE, source)).as(source).isNotNull();
        }
        assertThat(RuntimeHintsPredicates.resource().forResource("io/github/redissemaphore/scripts/acquire.lua"))
                .accepts(hints);
        assertThat(REFLECTION.onMethodInvocation(DistributedSemaphoreAspect.class, "guard")).accepts(hints);
        assertThat(REFLECTION.onType(DistributedSemaphoreProperties.Semaphore.class)).accepts(hints);
        assertThat(REFLECTION.onType(SemaphoresEndpoint.HolderDescriptor.class)).accepts(hints);
    }

    @Test
    void theGuardedMethodsOfTheApplicationAndTheirFallbacksCanBeInvoked() {
        assertThat(REFLECTION.onMethodInvocation(method(Reports.class, "generate", String.class))).accepts(hints);
        // declared in the superclass, which the proxy of Reports does not make reflective by itself
        assertThat(REFLECTION.onMethodInvocation(method(ReportsBase.class, "busy", String.class,
                SemaphoreRejectedException.class))).accepts(hints);
        assertThat(REFLECTION.onMethodInvocation(method(ReportsBase.class, "busy", String.class))).accepts(hints);
        assertThat(REFLECTION.onMethodInvocation(method(ReportsBase.class, "unrelated"))).as("not guarded")
                .rejects(hints);

        assertThat(REFLECTION.onMethodInvocation(method(Exports.class, "export", String.class))).as("class level")
                .accepts(hints);
    }

    /** Spring's AOT processing of {@link Application}, as a build plugin runs it; nothing compiled or started. */
    private static RuntimeHints process(InMemoryGeneratedFiles files) {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.register(Application.class);
            TestPropertyValues.of("management.endpoints.web.exposure.include=semaphores").applyTo(context);
            DefaultGenerationContext generation = new DefaultGenerationContext(
                    new ClassNameGenerator(ClassName.get(Application.class)), files);
            new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
            generation.writeGeneratedContent();
            return generation.getRuntimeHints();
        }
    }

    private static Method method(Class<?> type, String name, Class<?>... parameters) {
        Method method = ReflectionUtils.findMethod(type, name, parameters);
        assertThat(method).as(name).isNotNull();
        return method;
    }

    @Configuration(proxyBeanMethods = false)
    @BootLine.ImportRedisAutoConfiguration
    @ImportAutoConfiguration({AopAutoConfiguration.class,
            EndpointAutoConfiguration.class, DistributedSemaphoreAutoConfiguration.class,
            DistributedSemaphoreMetricsAutoConfiguration.class, DistributedSemaphoreEndpointAutoConfiguration.class})
    static class Application {

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Reports reports() {
            return new Reports();
        }

        @Bean
        Exports exports() {
            return new Exports();
        }
    }

    /** Fallbacks inherited by the guarded bean. */
    public static class ReportsBase {

        public String busy(String title, SemaphoreRejectedException rejection) {
            return "busy: " + title;
        }

        public String busy(String title) {
            return "busy: " + title;
        }

        public String unrelated() {
            return "no semaphore here";
        }
    }

    public static class Reports extends ReportsBase {

        @DistributedSemaphore(value = "reports", fallbackMethod = "busy")
        public String generate(String title) {
            return title;
        }
    }

    @DistributedSemaphore("exports")
    public static class Exports {

        public String export(String tenant) {
            return tenant;
        }
    }
}
