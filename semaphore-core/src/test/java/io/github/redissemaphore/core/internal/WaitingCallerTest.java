package io.github.redissemaphore.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The executor of a synchronous acquire's first reply. Invariant, whatever the interleaving of
 * tasks handed to it, the completion and an interrupt: every task runs exactly once, on the
 * caller's thread while it waits, else on the fallback; the one that completes the acquisition
 * runs on the caller's thread unless the caller was interrupted first.
 */
class WaitingCallerTest {

    private final ExecutorService fallback = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        fallback.shutdownNow();
    }

    @Test
    void runsTheReplyOnTheCallersThreadWhileItWaits() throws Exception {
        WaitingCaller caller = new WaitingCaller(fallback);
        CompletableFuture<String> done = new CompletableFuture<>();
        Thread callerThread = Thread.currentThread();
        List<Thread> ranOn = new ArrayList<>();
        // handed from another thread, as Lettuce's I/O thread hands the reply
        CompletableFuture.runAsync(() -> caller.execute(() -> {
            ranOn.add(Thread.currentThread());
            done.complete("permit");
        }));
        caller.runUntil(done);
        assertThat(ranOn).containsExactly(callerThread);
    }

    @Test
    void whatComesAfterTheCallerStoppedWaitingRunsOnTheFallback() throws Exception {
        WaitingCaller caller = new WaitingCaller(fallback);
        CompletableFuture<String> done = CompletableFuture.completedFuture("permit");
        caller.runUntil(done);
        CompletableFuture<Thread> ranOn = new CompletableFuture<>();
        caller.execute(() -> ranOn.complete(Thread.currentThread()));
        assertThat(ranOn.get(10, TimeUnit.SECONDS)).isNotSameAs(Thread.currentThread());
    }

    @Test
    void anInterruptHandsWhatIsLeftToTheFallback() throws Exception {
        WaitingCaller caller = new WaitingCaller(fallback);
        CompletableFuture<String> never = new CompletableFuture<>();
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> caller.runUntil(never)).isInstanceOf(InterruptedException.class);
        CountDownLatch ran = new CountDownLatch(1);
        caller.execute(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Seeded random races: tasks from several threads, the completion and the interrupt at random moments. */
    @Test
    void everyTaskRunsExactlyOnceWhateverTheInterleaving() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        ExecutorService senders = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 300; round++) {
                WaitingCaller caller = new WaitingCaller(fallback);
                CompletableFuture<Void> done = new CompletableFuture<>();
                int tasks = 1 + random.nextInt(6);
                boolean interrupt = random.nextBoolean();
                AtomicIntegerArray runs = new AtomicIntegerArray(tasks);
                AtomicReference<Thread> completedOn = new AtomicReference<>();
                Thread callerThread = Thread.currentThread();
                CountDownLatch handed = new CountDownLatch(tasks);
                for (int i = 0; i < tasks; i++) {
                    int task = i;
                    int delayMicros = random.nextInt(300);
                    boolean completes = task == tasks - 1;
                    senders.execute(() -> {
                        sleepMicros(delayMicros);
                        caller.execute(() -> {
                            runs.incrementAndGet(task);
                            if (completes) {
                                completedOn.set(Thread.currentThread());
                                done.complete(null);
                            }
                        });
                        handed.countDown();
                    });
                }
                CountDownLatch interrupterDone = new CountDownLatch(1);
                if (interrupt) {
                    int delayMicros = random.nextInt(300);
                    senders.execute(() -> {
                        sleepMicros(delayMicros);
                        callerThread.interrupt();
                        interrupterDone.countDown();
                    });
                } else {
                    interrupterDone.countDown();
                }
                try {
                    caller.runUntil(done);
                } catch (InterruptedException e) {
                    // the caller stopped waiting: what is left goes to the fallback
                }
                // an interrupt that came after the wait ended is cleared too, before the checks
                while (interrupterDone.getCount() > 0) {
                    Thread.onSpinWait();
                }
                Thread.interrupted();
                assertThat(handed.await(10, TimeUnit.SECONDS)).isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (total(runs) < tasks && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                for (int task = 0; task < tasks; task++) {
                    assertThat(runs.get(task)).as("seed %d round %d: runs of task %d", seed, round, task).isEqualTo(1);
                }
                if (!interrupt) {
                    assertThat(completedOn.get()).as("seed %d round %d: the reply's thread", seed, round)
                            .isSameAs(callerThread);
                }
            }
        } finally {
            senders.shutdownNow();
        }
    }

    private static void sleepMicros(int micros) {
        long until = System.nanoTime() + micros * 1000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    private static int total(AtomicIntegerArray runs) {
        int total = 0;
        for (int i = 0; i < runs.length(); i++) {
            total += runs.get(i);
        }
        return total;
    }
}
