package io.github.redissemaphore.sample;

import io.github.redissemaphore.sample.demo.Demo;

import java.util.Arrays;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * A service whose report generation and per-tenant exports are limited fleet-wide by
 * {@code @DistributedSemaphore}. {@code java -jar app.jar} runs one instance;
 * {@code java -jar app.jar --demo} runs the two-instance {@link Demo} instead and exits with its verdict.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

    /** The argument that turns the jar into the demo. */
    public static final String DEMO_ARGUMENT = "--demo";

    public static void main(String[] args) {
        if (Arrays.asList(args).contains(DEMO_ARGUMENT)) {
            String[] instanceArgs = Arrays.stream(args).filter(arg -> !arg.equals(DEMO_ARGUMENT)).toArray(String[]::new);
            System.exit(Demo.runFromCommandLine(instanceArgs));
        }
        SpringApplication.run(SampleApplication.class, args);
    }
}
