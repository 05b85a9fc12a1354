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
 * @param keepRunning       whether the instances stay up after the table, for their live view at
 *                          {@code /}, until the process is stopped
 */
public record DemoSettings(int instances, int reportCalls, int reportConcurrency, List<String> tenants,
        int exportsPerTenant, Duration progressEvery, boolean keepRunning) {

    /** The command-line argument that sets {@link #keepRunning()}. */
    public static final String KEEP_RUNNING_ARGUMENT = "--keep-running";

    /** The demo of {@code --demo}: 60 reports, 24 at a time, at 2 instances; 4 exports each for 3 tenants. */
    public static final DemoSettings DEFAULT =
            new DemoSettings(2, 60, 24, List.of("acme", "globex", "initech"), 4, Duration.ofSeconds(1));

    /** A demo that stops its instances after the table. */
    public DemoSettings(int instances, int reportCalls, int reportConcurrency, List<String> tenants,
            int exportsPerTenant, Duration progressEvery) {
        this(instances, reportCalls, reportConcurrency, tenants, exportsPerTenant, progressEvery, false);
    }

    public DemoSettings {
        tenants = List.copyOf(tenants);
        if (instances < 1 || reportCalls < 1 || reportConcurrency < 1 || exportsPerTenant < 0) {
            throw new IllegalArgumentException("instances, reportCalls and reportConcurrency must be at least 1 "
                    + "and exportsPerTenant at least 0");
        }
    }

    /** @return these settings, keeping the instances up after the table or not */
    public DemoSettings withKeepRunning(boolean keepRunning) {
        return new DemoSettings(instances, reportCalls, reportConcurrency, tenants, exportsPerTenant, progressEvery,
                keepRunning);
    }

    /** @return how many exports are fired in all */
    int exportCalls() {
        return tenants.size() * exportsPerTenant;
    }
}
