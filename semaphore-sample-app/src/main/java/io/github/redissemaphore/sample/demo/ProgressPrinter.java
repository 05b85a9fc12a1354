package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.sample.inflight.InFlightCounter;
import io.github.redissemaphore.sample.inflight.InFlightCounter.InFlight;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Prints one line per interval while the bursts run: reports inside the method right now across
 * the fleet, the most so far, the calls finished, and the flooding tenant's queue.
 */
final class ProgressPrinter implements AutoCloseable {

    private final PrintStream out;
    private final InFlightCounter inFlight;
    private final Tally reports;
    private final Tally exports;
    private final CapQueues queues;
    private final String floodingTenant;
    private final long startNanos = System.nanoTime();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "demo-progress");
        thread.setDaemon(true);
        return thread;
    });

    private ProgressPrinter(PrintStream out, InFlightCounter inFlight, Tally reports, Tally exports, CapQueues queues,
            String floodingTenant) {
        this.out = out;
        this.inFlight = inFlight;
        this.reports = reports;
        this.exports = exports;
        this.queues = queues;
        this.floodingTenant = floodingTenant;
    }

    /** Starts printing every {@code interval} until closed. */
    static ProgressPrinter start(PrintStream out, InFlightCounter inFlight, Tally reports, Tally exports,
            CapQueues queues, String floodingTenant, Duration interval) {
        ProgressPrinter printer = new ProgressPrinter(out, inFlight, reports, exports, queues, floodingTenant);
        printer.timer.scheduleAtFixedRate(printer::print, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return printer;
    }

    private void print() {
        try {
            InFlight now = inFlight.read(Demo.REPORTS);
            out.printf("  %5.1fs  reports: %d running now, max %d so far, %3d served, %2d refused, %2d timed out"
                            + "  |  exports: %2d served, %2d rejected (429), %s queues %d%n",
                    (System.nanoTime() - startNanos) / 1e9, now.now(), now.max(),
                    reports.count(Outcome.SERVED), reports.count(Outcome.REFUSED), reports.count(Outcome.REJECTED),
                    exports.count(Outcome.SERVED), exports.count(Outcome.REJECTED), floodingTenant,
                    queues.now(floodingTenant));
        } catch (RuntimeException e) {
            // A progress line is a nicety: a failed read must not end the timer, the next one may work.
            out.println("  (progress unavailable: " + e.getMessage() + ")");
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
