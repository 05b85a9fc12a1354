package io.github.redissemaphore.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Many threads in several "JVMs" taking and giving back permits, with the number of holders
 * tracked independently of the library: the invariant every concurrency test checks.
 */
final class Contention {

    /** How to try for one permit. */
    @FunctionalInterface
    interface Attempt {
        Optional<Permit> tryAcquire(RedisSemaphore semaphore) throws InterruptedException;
    }

    /**
     * @param most    the highest number of holders at once
     * @param granted how many attempts got a permit
     */
    record Result(int most, int granted) {
    }

    private Contention() {
    }

    /** Runs {@code cycles} attempts on each of {@code threadsPerJvm} threads per semaphore. */
    static Result run(List<RedisSemaphore> jvms, int threadsPerJvm, int cycles, Attempt attempt) throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threadsPerJvm * jvms.size());
        try {
            List<Callable<Void>> workers = new ArrayList<>();
            for (RedisSemaphore semaphore : jvms) {
                for (int t = 0; t < threadsPerJvm; t++) {
                    workers.add(() -> {
                        for (int i = 0; i < cycles; i++) {
                            Optional<Permit> permit = attempt.tryAcquire(semaphore);
                            if (permit.isPresent()) {
                                granted.incrementAndGet();
                                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                                LockSupport.parkNanos(100_000); // a little work while holding
                                inside.decrementAndGet();
                                permit.get().release();
                            }
                        }
                        return null;
                    });
                }
            }
            for (Future<Void> worker : pool.invokeAll(workers)) {
                worker.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return new Result(most.get(), granted.get());
    }
}
