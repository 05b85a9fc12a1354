package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.sample.exports.ExportService;
import io.github.redissemaphore.sample.inflight.InFlightCounter;
import io.github.redissemaphore.sample.reports.ReportService;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

/**
 * The one-command demo: starts two instances of the service in this JVM sharing one Redis (the
 * configured one if it answers, else an embedded one), fires a burst of report requests at both
 * and, at the same moment, a flood of exports from one tenant and a few from each other tenant,
 * prints a progress line per second and a final table with each tenant's queue and waits, and
 * says whether the limits held; then a burst of payments, against both clauses of a provider's
 * contract ({@link Payments}), and whether neither was broken.
 *
 * <p>How many calls run inside the guarded methods at once is counted by the sample's own
 * {@link InFlightCounter} around the method bodies, not taken from the library under test.
 */
public final class Demo {

    static final String REPORTS = ReportService.SEMAPHORE;
    /** The longest the demo stays silent before it says what it is busy with. */
    static final Duration QUIET = Duration.ofSeconds(3);
    /** How often the tenants' queues are read from Redis: often enough to catch the flood's peak. */
    private static final Duration QUEUE_READS = Duration.ofMillis(100);

    private Demo() {
    }

    /**
     * Runs {@link DemoSettings#DEFAULT} and prints to standard out; with
     * {@value DemoSettings#KEEP_RUNNING_ARGUMENT} the instances stay up after the table.
     *
     * @param args command-line arguments for every instance, e.g. {@code --spring.data.redis.port=6380},
     *             and the demo's own {@value DemoSettings#KEEP_RUNNING_ARGUMENT}
     * @return the process exit status: {@link DemoResult#exitCode()}, or 3 if the demo could not run
     */
    public static int runFromCommandLine(String... args) {
        PrintStream out = System.out;
        boolean keepRunning = Arrays.asList(args).contains(DemoSettings.KEEP_RUNNING_ARGUMENT);
        String[] instanceArgs = Arrays.stream(args)
                .filter(arg -> !arg.equals(DemoSettings.KEEP_RUNNING_ARGUMENT)).toArray(String[]::new);
        try {
            return run(DemoSettings.DEFAULT.withKeepRunning(keepRunning), out, instanceArgs).exitCode();
        } catch (RuntimeException e) {
            out.println("The demo could not run: " + e);
            e.printStackTrace(out);
            return 3;
        }
    }

    /**
     * Runs one demo: starts the fleet, fires the bursts, prints progress and the table to {@code out},
     * stops the fleet.
     *
     * @param args command-line arguments for every instance
     */
    public static DemoResult run(DemoSettings settings, PrintStream target, String... args) {
        // Keys of this run only: a shared Redis may hold other semaphores, even other demo runs.
        String keyPrefix = "demo-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        try (Heartbeat heartbeat = Heartbeat.start(target, QUIET)) {
            PrintStream out = heartbeat.out();
            out.printf("Starting %d instances of the sample service...%n", settings.instances());
            DemoResult result;
            try (Fleet fleet = Fleet.start(settings.instances(), keyPrefix, heartbeat, args)) {
                describe(fleet, settings, keyPrefix, out);
                heartbeat.doing("firing the bursts");
                result = fire(fleet, settings, out);
                heartbeat.doing(null);
                out.println();
                out.print(result.table());
                heartbeat.doing("firing the payments");
                out.println();
                Payments.fire(fleet, out);
                heartbeat.doing(null);
                forgetCounts(fleet, settings);
                if (settings.keepRunning()) {
                    LiveView.showUntilStopped(fleet, out);
                }
                heartbeat.doing("stopping the instances");
            }
            heartbeat.doing(null);
            return result;
        }
    }

    private static void describe(Fleet fleet, DemoSettings settings, String keyPrefix, PrintStream out) {
        SemaphoreSettings exports = exportSettings(fleet);
        out.printf("Redis: %s (keys under %s)%n", fleet.redisDescription(), keyPrefix);
        SemaphoreSettings reports = fleet.first().bean(SemaphoreRegistry.class).settingsOf(REPORTS);
        out.printf("Firing %d POST /reports (%d at a time, spread over the instances; %d permits fleet-wide, %s) "
                        + "and, at once, %d exports of %s (flooding) and %d of each of %s (%d per tenant, %d in all)...%n",
                settings.reportCalls(), settings.reportConcurrency(), reports.permits(),
                reports.boundsQueue() ? "at most " + reports.maxWaiters() + " waiting, more refused at once"
                        : "no bound on the queue",
                settings.floodExports(), settings.floodingTenant(), settings.exportsPerTenant(),
                settings.tenants().subList(1, settings.tenants().size()), exports.permits(), exports.totalPermits());
    }

    private static DemoResult fire(Fleet fleet, DemoSettings settings, PrintStream out) {
        List<Instance> instances = fleet.instances();
        DemoClient client = new DemoClient();
        Tally reportTally = new Tally();
        Tally exportTally = new Tally();
        InFlightCounter inFlight = fleet.first().bean(InFlightCounter.class);
        long start = System.nanoTime();
        List<Call> reports;
        List<Call> exports;
        CapQueues queues = CapQueues.watch(fleet.first().bean(SemaphoreRegistry.class).cap(ExportService.SEMAPHORE),
                QUEUE_READS);
        try (queues; ProgressPrinter progress = ProgressPrinter.start(out, inFlight, reportTally, exportTally,
                queues, settings.floodingTenant(), settings.progressEvery())) {
            CompletableFuture<List<Call>> exportBurst = CompletableFuture.supplyAsync(() -> Burst.fire(
                    settings.exportCalls(), Math.max(1, settings.exportCalls()),
                    i -> client.export(instances.get(i % instances.size()), settings.tenantOf(i)),
                    exportTally));
            reports = Burst.fire(settings.reportCalls(), settings.reportConcurrency(),
                    i -> client.report(instances.get(i % instances.size())), reportTally);
            exports = exportBurst.join();
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        LimitCheck reportCheck = new LimitCheck(REPORTS, permits(fleet, REPORTS),
                inFlight.read(REPORTS).max(), reports);
        SemaphoreSettings exportSettings = exportSettings(fleet);
        List<TenantExports> tenants = settings.tenants().stream().map(tenant -> {
            List<Call> calls = IntStream.range(0, exports.size()).filter(i -> settings.tenantOf(i).equals(tenant))
                    .mapToObj(exports::get).toList();
            LimitCheck check = new LimitCheck(ExportService.semaphoreOf(tenant), exportSettings.permits(),
                    inFlight.read(ExportService.semaphoreOf(tenant)).max(), calls);
            return new TenantExports(check, queues.most(tenant), tenant.equals(settings.floodingTenant()));
        }).toList();
        long exportPeak = tenants.stream().mapToLong(tenant -> tenant.check().maxInside()).max().orElse(0);
        LimitCheck exportCheck = new LimitCheck(ExportService.SEMAPHORE + ":*", exportSettings.permits(), exportPeak,
                exports);
        LimitCheck capCheck = new LimitCheck(ExportService.SEMAPHORE, exportSettings.totalPermits(),
                inFlight.read(ExportService.SEMAPHORE).max(), exports);
        return new DemoResult(fleet.redisDescription(), instances.size(), reportCheck, exportCheck, capCheck, tenants,
                took);
    }

    /** The limit as the application configured it. */
    private static int permits(Fleet fleet, String semaphore) {
        return fleet.first().bean(SemaphoreRegistry.class).settingsOf(semaphore).permits();
    }

    /** The exports' settings as the application configured them: permits per tenant, total-permits of all. */
    private static SemaphoreSettings exportSettings(Fleet fleet) {
        return fleet.first().bean(SemaphoreRegistry.class).settingsOf(ExportService.SEMAPHORE);
    }

    /** The counters would expire by themselves; a shared Redis is left as it was found, sooner. */
    private static void forgetCounts(Fleet fleet, DemoSettings settings) {
        InFlightCounter inFlight = fleet.first().bean(InFlightCounter.class);
        inFlight.reset(REPORTS);
        inFlight.reset(ExportService.SEMAPHORE);
        settings.tenants().forEach(tenant -> inFlight.reset(ExportService.semaphoreOf(tenant)));
    }
}
