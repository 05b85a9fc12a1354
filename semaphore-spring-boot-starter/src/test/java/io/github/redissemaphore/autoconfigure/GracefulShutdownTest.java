package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Closing the application while callers wait and hold permits: the waiters get a clear exception
 * at once, and Redis is left with nothing held or queued, because the registry stops before the
 * Redis connection factory.
 */
@RedisTest
class GracefulShutdownTest {

    private final ExecutorService callers = Executors.newCachedThreadPool();

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    @Test
    void closingTheContextWakesWaitersAndGivesEveryPermitBack(RedisServer server) {
        try (SemaphoreRegistry observer = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix()).build()) {
            StarterContexts.on(server)
                    .withPropertyValues("distributed-semaphore.semaphores.shutdown.wait-time=60s")
                    .withBean(Service.class)
                    .run(context -> {
                        Service service = context.getBean(Service.class);
                        Gate gate = new Gate();
                        Future<String> holder = callers.submit(() -> service.call(gate));
                        gate.awaitEntered(1);
                        Future<String> waiter = callers.submit(() -> service.call(null));
                        await().until(() -> state(observer).waiters().size() == 1);

                        context.close();

                        Throwable woken = catchThrowable(() -> waiter.get(10, TimeUnit.SECONDS));
                        assertThat(woken).cause().isInstanceOf(SemaphoreUnavailableException.class)
                                .hasMessageContaining("shutting down");
                        SemaphoreState left = state(observer);
                        assertThat(left.used()).isZero();
                        assertThat(left.holders()).isEmpty();
                        assertThat(left.waiters()).isEmpty();

                        gate.open();
                        assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo("done");
                        assertThat(state(observer).used()).isZero();
                    });
        }
    }

    private static SemaphoreState state(SemaphoreRegistry observer) {
        return observer.semaphore("shutdown").state();
    }

    static class Service {

        @DistributedSemaphore("shutdown")
        public String call(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }
    }
}
