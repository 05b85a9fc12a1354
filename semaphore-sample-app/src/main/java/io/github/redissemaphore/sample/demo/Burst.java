package io.github.redissemaphore.sample.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Fires numbered calls from a fixed number of client threads, the first wave all at the same
 * moment, and collects what each returned.
 */
final class Burst {

    private Burst() {
    }

    /**
     * @param calls       how many calls
     * @param concurrency how many are under way at once
     * @param call        makes call number {@code i}
     * @param tally       counts each result as it arrives
     * @return the results, in call order
     */
    static List<Call> fire(int calls, int concurrency, IntFunction<Call> call, Tally tally) {
        ExecutorService clients = Executors.newFixedThreadPool(concurrency);
        // Held until every call is queued, so the first wave leaves together.
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<Call>> pending = new ArrayList<>(calls);
            for (int i = 0; i < calls; i++) {
                int number = i;
                pending.add(clients.submit(() -> {
                    go.await();
                    Call result = call.apply(number);
                    tally.record(result);
                    return result;
                }));
            }
            go.countDown();
            List<Call> results = new ArrayList<>(calls);
            for (Future<Call> future : pending) {
                results.add(future.get());
            }
            return results;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the burst ran", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a demo call crashed", e.getCause());
        } finally {
            clients.shutdownNow();
        }
    }
}
