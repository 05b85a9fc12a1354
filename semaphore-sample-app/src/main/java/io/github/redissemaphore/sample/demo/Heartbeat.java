package io.github.redissemaphore.sample.demo;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Keeps the demo from going quiet: when nothing was printed for {@code quiet}, it prints what the
 * demo is busy with and for how long ("still starting instance A (6 s)"), so a person watching a
 * slow machine never wonders whether it hangs.
 */
final class Heartbeat implements AutoCloseable {

    private final PrintStream out;
    private final long quietNanos;
    private volatile long lastPrintNanos = System.nanoTime();
    private volatile @Nullable String doing;
    private volatile long doingSinceNanos = System.nanoTime();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "demo-heartbeat");
        thread.setDaemon(true);
        return thread;
    });

    private Heartbeat(PrintStream target, Duration quiet) {
        this.quietNanos = quiet.toNanos();
        this.out = new PrintStream(new FilterOutputStream(target) {
            @Override
            public void write(int b) throws IOException {
                out.write(b);
                lastPrintNanos = System.nanoTime();
            }

            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
                out.write(bytes, offset, length);
                lastPrintNanos = System.nanoTime();
            }
        }, true, StandardCharsets.UTF_8);
    }

    /** Watches what is printed on {@link #out()} and speaks up after {@code quiet} of silence. */
    static Heartbeat start(PrintStream target, Duration quiet) {
        Heartbeat heartbeat = new Heartbeat(target, quiet);
        long checkMillis = Math.max(quiet.toMillis() / 6, 50);
        heartbeat.timer.scheduleWithFixedDelay(heartbeat::check, checkMillis, checkMillis, TimeUnit.MILLISECONDS);
        return heartbeat;
    }

    /** @return the stream to print on: whatever is printed there counts as a sign of life */
    PrintStream out() {
        return out;
    }

    /** From now on, the demo is busy with {@code what} ("starting instance A"); null: nothing to say. */
    void doing(@Nullable String what) {
        doingSinceNanos = System.nanoTime();
        doing = what;
    }

    private void check() {
        String what = doing;
        long now = System.nanoTime();
        if (what != null && now - lastPrintNanos >= quietNanos) {
            out.printf("  ... still %s (%d s)%n", what, TimeUnit.NANOSECONDS.toSeconds(now - doingSinceNanos));
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
