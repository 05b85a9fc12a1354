package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.LocalStates;
import io.github.redissemaphore.web.SemaphoreExceptionHandler;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.servlet.DispatcherServlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * When the 429/503 answers are configured: in a Spring MVC or WebFlux application, unless switched
 * off or replaced; never elsewhere. What they say over HTTP is {@code MvcProblemDetailsTest}'s and
 * {@code WebFluxProblemDetailsTest}'s. The answers need no Redis, so none is started here.
 */
class DistributedSemaphoreWebAutoConfigurationTest {

    private static final AutoConfigurations WEB = AutoConfigurations.of(DistributedSemaphoreWebAutoConfiguration.class);

    private final WebApplicationContextRunner mvc = new WebApplicationContextRunner().withConfiguration(WEB);
    private final ReactiveWebApplicationContextRunner webFlux = new ReactiveWebApplicationContextRunner()
            .withConfiguration(WEB);

    @Test
    void inAnMvcAndInAWebFluxApplication() {
        mvc.run(context -> assertThat(context).hasSingleBean(SemaphoreExceptionHandler.class));
        webFlux.run(context -> assertThat(context).hasSingleBean(SemaphoreExceptionHandler.class));
    }

    @Test
    void notOutsideAWebApplicationNorWithoutItsWebStack() {
        new ApplicationContextRunner().withConfiguration(WEB)
                .run(context -> assertThat(context).doesNotHaveBean(SemaphoreExceptionHandler.class));
        mvc.withClassLoader(new FilteredClassLoader(DispatcherServlet.class))
                .run(context -> assertThat(context).doesNotHaveBean(SemaphoreExceptionHandler.class));
        webFlux.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
                .run(context -> assertThat(context).doesNotHaveBean(SemaphoreExceptionHandler.class));
        mvc.withClassLoader(new FilteredClassLoader(ProblemDetail.class))
                .run(context -> assertThat(context).doesNotHaveBean(SemaphoreExceptionHandler.class));
    }

    @Test
    void switchedOffByItsPropertyOrWithTheWholeStarter() {
        for (AbstractApplicationContextRunner<?, ?, ?> runner : List.of(mvc, webFlux)) {
            for (String off : List.of("distributed-semaphore.problem-details.enabled=false",
                    "distributed-semaphore.enabled=false")) {
                runner.withPropertyValues(off).run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(SemaphoreExceptionHandler.class));
            }
        }
    }

    @Test
    void aSwitchThatIsNeitherTrueNorFalseStopsTheStartUp() {
        mvc.withPropertyValues("distributed-semaphore.problem-details.enabled=flase")
                .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void theApplicationsOwnHandlerReplacesOurs() {
        SemaphoreExceptionHandler own = new SemaphoreExceptionHandler(Duration.ofSeconds(9));
        mvc.withBean(SemaphoreExceptionHandler.class, () -> own)
                .run(context -> assertThat(context).getBean(SemaphoreExceptionHandler.class).isSameAs(own));
    }

    @Test
    void retryAfterIsBoundAndValidated() {
        mvc.withPropertyValues("distributed-semaphore.problem-details.retry-after=2500ms").run(context -> {
            ResponseEntity<ProblemDetail> answer = context.getBean(SemaphoreExceptionHandler.class)
                    .rejected(new SemaphoreRejectedException("reports", 1, Duration.ZERO));
            assertThat(answer.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("3");
        });
        mvc.run(context -> assertThat(context.getBean(SemaphoreExceptionHandler.class)
                .unavailable(new SemaphoreUnavailableException("reports", "down", null)).getHeaders()
                .getFirst(HttpHeaders.RETRY_AFTER)).as("no figure configured, no header").isNull());
        mvc.withPropertyValues("distributed-semaphore.problem-details.retry-after=0s")
                .run(context -> assertThat(context).hasFailed());
    }

    /** The mode comes from the registry's settings when there is a registry, and is left out when there is none. */
    @Test
    void aServiceUnavailableNamesTheModeTheRegistryGivesTheSemaphore() {
        SemaphoreUnavailableException unreachable = new SemaphoreUnavailableException("reports",
                SemaphoreUnavailableException.Reason.UNREACHABLE, "Redis at 127.0.0.1:1 cannot be reached", null);
        mvc.withBean(SemaphoreRegistry.class, LocalStates::new).run(context -> assertThat(context
                .getBean(SemaphoreExceptionHandler.class).unavailable(unreachable).getBody().getProperties())
                .contains(entry("whenUnavailable", "reject")));
        mvc.run(context -> assertThat(context.getBean(SemaphoreExceptionHandler.class).unavailable(unreachable)
                .getBody().getProperties()).as("no registry").doesNotContainKey("whenUnavailable"));
    }

    @Test
    void aFailureWithoutASemaphoreIsAnsweredWithoutOne() {
        mvc.run(context -> {
            ResponseEntity<ProblemDetail> answer = context.getBean(SemaphoreExceptionHandler.class)
                    .unavailable(new SemaphoreUnavailableException(null, SemaphoreUnavailableException.Reason.SHUTTING_DOWN,
                            "The semaphore registry is closed", null));
            assertThat(answer.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
            assertThat(answer.getBody().getDetail()).isEqualTo("Unavailable; try again later");
            assertThat(answer.getBody().getProperties()).containsOnly(entry("cause", "the service is shutting down"));
        });
    }
}
