package io.github.redissemaphore.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How late a plain JDK timer of this JVM runs (one task every 10 ms): the machine's own scheduling
 * noise, for tests that time the library.
 *
 * <p>A timed check widens its bound by the noise of the ticks due while the timed call ran
 * ({@link #during}): a call is late only if it is later than the machine let any timer run. On an
 * idle machine that is a few milliseconds, so the bound is the one promised; on a CI machine whose
 * cores are busy elsewhere a call is not held to a promptness no thread of the JVM had, while a
 * library that adds a delay of its own still fails.
 */
public final class SchedulingNoise implements AutoCloseable {

    private static final long PERIOD = TimeUnit.MILLISECONDS.toNanos(10);

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "scheduling-noise");
        thread.setDaemon(true);
        return thread;
    });
    private final long start = System.nanoTime();
    private final AtomicLong ticks = new AtomicLong();
    private final AtomicLong worst = new AtomicLong();
    /** Lateness of each tick, by the time it was due. */
    private final ConcurrentSkipListMap<Long, Long> lateByDue = new ConcurrentSkipListMap<>();

    /** Starts the probe. */
    public SchedulingNoise() {
        timer.scheduleAtFixedRate(() -> {
            long due = start + PERIOD * ticks.incrementAndGet();
            long late = System.nanoTime() - due;
            lateByDue.put(due, late);
            worst.accumulateAndGet(late, Math::max);
        }, PERIOD, PERIOD, TimeUnit.NANOSECONDS);
    }

    /**
     * The worst lateness of the ticks due between two {@link System#nanoTime()} readings, once
     * they have all run (a starved timer runs them late, after the timed call returned).
     */
    public Duration during(long startNanos, long endNanos) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> !lateByDue.isEmpty() && lateByDue.lastKey() >= endNanos);
        return Duration.ofNanos(lateByDue.subMap(startNanos, true, endNanos + PERIOD, true).values().stream()
                .mapToLong(Long::longValue).max().orElse(0));
    }

    /**
     * Asserts that what ran from {@code startNanos} to {@code endNanos} ({@link System#nanoTime()}
     * readings) took less than {@code bound}, widened by the worst lateness of the ticks due
     * meanwhile ({@link #during}).
     *
     * @param what names the timed step in the failure message
     */
    public void assertTookLessThan(String what, long startNanos, long endNanos, Duration bound) {
        Duration late = during(startNanos, endNanos);
        assertThat(Duration.ofNanos(endNanos - startNanos))
                .as("%s (bound %d ms; a 10 ms JDK timer ran up to %d ms late meanwhile)", what, bound.toMillis(),
                        late.toMillis())
                .isLessThan(bound.plus(late));
    }

    /** Stops the probe. @return a description of the worst lateness seen */
    public String stop() {
        close();
        return "a 10 ms JDK timer ran up to " + TimeUnit.NANOSECONDS.toMillis(worst.get()) + " ms late meanwhile";
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
