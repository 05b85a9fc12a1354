package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Many virtual threads wait for few permits with the blocking API: all are served, never more
 * inside than permits, and Java Flight Recorder sees none of them pinned to its carrier in the
 * library's code. Runs on Java 21 and later (skipped on 17, where the library is built and
 * {@code NoMonitorsTest} keeps monitors out instead); since Java 24 a monitor no longer pins, so
 * there the pinned-thread part guards only against native frames.
 */
@RedisTest
class VirtualThreadsTest extends SemaphoreTestBase {

    private static final int THREADS = 40;
    private static final int PERMITS = 2;
    private static final String PINNED = "jdk.VirtualThreadPinned";

    VirtualThreadsTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }

    @Test
    void virtualThreadsWaitForPermitsWithoutPinningTheirCarriers() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
        RedisSemaphore semaphore = newRegistry().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(PERMITS));
        AtomicInteger most = new AtomicInteger();
        List<String> pinned = new CopyOnWriteArrayList<>();

        // A first round, not recorded, initialises the classes of every path: a virtual thread
        // that waits while another thread initialises a class is pinned (a JDK limitation up to
        // Java 25 at least, once per class, e.g. on the first acquisitions), whatever the code.
        round(semaphore, most);
        try (RecordingStream recording = new RecordingStream()) {
            recording.enable(PINNED).withThreshold(Duration.ZERO).withStackTrace();
            recording.onEvent(PINNED, event -> {
                if (inLibrary(event.getStackTrace())) {
                    pinned.add(event.getStackTrace().getFrames().toString());
                }
            });
            recording.startAsync();
            round(semaphore, most);
            stop(recording);
        }
        assertThat(most.get()).as("most inside at once").isBetween(1, PERMITS);
        assertThat(semaphore.state().used()).isZero();
        assertThat(pinned).as("virtual threads pinned in the library's code").isEmpty();
    }

    /** {@link #THREADS} virtual threads each take a permit, hold it 5 ms and give it back. */
    private static void round(RedisSemaphore semaphore, AtomicInteger most) throws Exception {
        AtomicInteger inside = new AtomicInteger();
        List<Future<Boolean>> calls = new ArrayList<>();
        ExecutorService virtualThreads = newVirtualThreadPerTaskExecutor();
        try {
            for (int i = 0; i < THREADS; i++) {
                calls.add(virtualThreads.submit(() -> {
                    Optional<Permit> permit = semaphore.tryAcquire(1, Duration.ofSeconds(60));
                    if (permit.isEmpty()) {
                        return false;
                    }
                    try (Permit held = permit.get()) {
                        most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        Thread.sleep(5);
                        inside.decrementAndGet();
                    }
                    return true;
                }));
            }
            for (Future<Boolean> call : calls) {
                assertThat(call.get(120, TimeUnit.SECONDS)).as("served within its wait").isTrue();
            }
        } finally {
            virtualThreads.shutdownNow();
        }
    }

    /**
     * A pin with the library's code on the stack, except while the JVM loads a class: loading
     * pins (a JDK limitation, once per class, e.g. on the first acquisition), whatever the code.
     */
    private static boolean inLibrary(RecordedStackTrace stackTrace) {
        if (stackTrace == null) {
            return false;
        }
        List<String> types = stackTrace.getFrames().stream().map(RecordedFrame::getMethod)
                .map(method -> method.getType().getName()).toList();
        return types.stream().noneMatch(type -> type.equals(ClassLoader.class.getName()))
                && types.stream().anyMatch(type -> type.startsWith("io.github.redissemaphore.core")
                        && !type.startsWith(VirtualThreadsTest.class.getName()));
    }

    /** {@code Executors.newVirtualThreadPerTaskExecutor()}, which the Java 17 compiler cannot see. */
    private static ExecutorService newVirtualThreadPerTaskExecutor() throws ReflectiveOperationException {
        return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    }

    /** {@code RecordingStream.stop()} (Java 20): delivers every recorded event before it returns. */
    private static void stop(RecordingStream recording) throws ReflectiveOperationException {
        RecordingStream.class.getMethod("stop").invoke(recording);
    }
}
