package io.github.redissemaphore.sample.demo;

import java.time.Duration;
import java.util.List;

/**
 * The shape of a demo run.
 *
 * @param instances         how many instances of the service to start (all in this JVM, one Redis)
 * @param reportCalls       how many {@code POST /reports} to fire, spread over the instances
 * @param reportConcurrency how many of them are on the wire at once
 * @param tenants           the tenants whose exports are fired
 * @param exportsPerTenant  how many exports per tenant are fired at the same moment
 * @param progressEvery     how often a progress line is printed
 */
public record DemoSettings(int instances, int reportCalls, int reportConcurrency, List<String> tenants,
        int exportsPerTenant, Duration progressEvery) {

    /** The demo of {@code --demo}: 60 reports, 24 at a time, at 2 instances; 4 exports each for 3 tenants. */
    public static final DemoSettings DEFAULT =
            new DemoSettings(2, 60, 24, List.of("acme", "globex", "initech"), 4, Duration.ofSeconds(1));

    public DemoSettings {
        tenants = List.copyOf(tenants);
        if (instances < 1 || reportCalls < 1 || reportConcurrency < 1 || exportsPerTenant < 0) {
            throw new IllegalArgumentException("instances, reportCalls and reportConcurrency must be at least 1 "
                    + "and exportsPerTenant at least 0");
        }
    }

    /** @return how many exports are fired in all */
    int exportCalls() {
        return tenants.size() * exportsPerTenant;
    }
}
