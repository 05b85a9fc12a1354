package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.annotation.DistributedSemaphore;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import io.github.redissemaphore.starter.BootLine;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The log of an application that has a {@code @DistributedSemaphore} bean and a wrong property:
 * the first error it prints is the failure report naming the property. Spring creates the aspect
 * while it sorts the advice of that bean; were the registry (and so the properties) created then,
 * the start-up would fail there and the log would lead with "Advisor sorting failed", a false hint
 * about the application's own use of {@code Ordered}.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureLogTest {

    @Test
    void theFirstErrorPrintedIsTheReportOnTheProperty(CapturedOutput output) {
        SpringApplication application = new SpringApplication(ReportApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatException().isThrownBy(() -> application.run("--spring.data.redis.url=redis://127.0.0.1:1",
                "--distributed-semaphore.semaphores.reports.lease-time=-5s"));

        List<String> lines = Arrays.asList(output.toString().split("\\R"));
        int firstError = indexOf(lines, " ERROR ");
        assertThat(firstError).as("an error in %s", output).isNotNegative();
        assertThat(lines.get(firstError)).contains("LoggingFailureAnalysisReporter");
        String report = String.join("\n", lines.subList(firstError, lines.size()));
        assertThat(report).containsSubsequence("APPLICATION FAILED TO START", "Description:",
                "Property: distributed-semaphore.semaphores.reports.lease-time", "Value: \"-5s\"",
                "Reason: must be between 100ms and 24h", "Action:",
                "Set distributed-semaphore.semaphores.reports.lease-time to a duration from 100ms to 24h");
        assertThat(output.toString()).doesNotContain("Advisor sorting", "Ordered interface");
        // what Spring logs as it gives up (a WARN, before the report) blames the binding, not the application's bean
        assertThat(lines.get(indexOf(lines, "cancelling refresh attempt")))
                .contains("Could not bind properties to 'DistributedSemaphoreProperties'")
                .doesNotContain("reportService");
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    @Configuration(proxyBeanMethods = false)
    @BootLine.ImportRedisAutoConfiguration
    @ImportAutoConfiguration({AopAutoConfiguration.class, DistributedSemaphoreAutoConfiguration.class, DistributedSemaphoreMetricsAutoConfiguration.class,
            DistributedSemaphoreEndpointAutoConfiguration.class})
    static class ReportApplication {

        @Bean
        ReportService reportService() {
            return new ReportService();
        }
    }

    /** An application bean the aspect advises: creating it makes Spring sort its advice. */
    static class ReportService {

        @DistributedSemaphore("reports")
        public String report() {
            return "report";
        }
    }
}
