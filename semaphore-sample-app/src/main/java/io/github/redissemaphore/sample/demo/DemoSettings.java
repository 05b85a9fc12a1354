package io.github.redissemaphore.sample.demo;

import java.time.Duration;
import java.util.List;

/**
 * The shape of a demo run.
 *
 * @param instances         how many instances of the service to start (all in this JVM, one Redis)
 * @param reportCalls       how many {@code POST /reports} to fire, spread over the instances
 * @param reportConcurrency how many of them are on the wire at once
 * @param tenants           the tenants whose exports are fired; the first one floods
 * @param floodExports      how many exports the first tenant fires at the same moment
 * @param exportsPerTenant  how many exports each other tenant fires at that moment
 * @param progressEvery     how often a progress line is printed
 * @param keepRunning       whether the instances stay up after the table, for their live view at
 *                          {@code /}, until the process is stopped
 */
public record DemoSettings(int instances, int reportCalls, int reportConcurrency, List<String> tenants,
        int floodExports, int exportsPerTenant, Duration progressEvery, boolean keepRunning) {

    /** The command-line argument that sets {@link #keepRunning()}. */
    public static final String KEEP_RUNNING_ARGUMENT = "--keep-running";

    /**
     * The demo of {@code --demo}: 60 reports, 24 at a time, at 2 instances; acme floods with 10
     * exports while globex and initech send 2 each.
     */
    public static final DemoSettings DEFAULT =
            new DemoSettings(2, 60, 24, List.of("acme", "globex", "initech"), 10, 2, Duration.ofSeconds(1));

    /** A demo that stops its instances after the table. */
    public DemoSettings(int instances, int reportCalls, int reportConcurrency, List<String> tenants,
            int floodExports, int exportsPerTenant, Duration progressEvery) {
        this(instances, reportCalls, reportConcurrency, tenants, floodExports, exportsPerTenant, progressEvery, false);
    }

    public DemoSettings {
        tenants = List.copyOf(tenants);
        if (instances < 1 || reportCalls < 1 || reportConcurrency < 1 || tenants.isEmpty() || floodExports < 0
                || exportsPerTenant < 0) {
            throw new IllegalArgumentException("instances, reportCalls, reportConcurrency and the tenants must be at"
                    + " least 1, floodExports and exportsPerTenant at least 0");
        }
    }

    /** @return these settings, keeping the instances up after the table or not */
    public DemoSettings withKeepRunning(boolean keepRunning) {
        return new DemoSettings(instances, reportCalls, reportConcurrency, tenants, floodExports, exportsPerTenant,
                progressEvery, keepRunning);
    }

    /** @return the tenant that floods */
    String floodingTenant() {
        return tenants.get(0);
    }

    /** @return how many exports are fired in all */
    int exportCalls() {
        return floodExports + (tenants.size() - 1) * exportsPerTenant;
    }

    /** @return whose export call number {@code i} is: the flooding tenant's first, then the others' in turn */
    String tenantOf(int i) {
        return i < floodExports ? floodingTenant() : tenants.get(1 + (i - floodExports) % (tenants.size() - 1));
    }
}
