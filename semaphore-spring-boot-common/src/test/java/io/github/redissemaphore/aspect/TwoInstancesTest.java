package io.github.redissemaphore.aspect;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.starter.Gate;
import io.github.redissemaphore.starter.StarterContexts;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Two application contexts ("instances") on one Redis, each with the same annotated service:
 * together they never run more calls at once than the semaphore has permits.
 */
@RedisTest
class TwoInstancesTest {

    private static final int CALLERS = 16;

    private final ApplicationContextRunner instance;
    private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
    private final Occupancy occupancy = new Occupancy();

    TwoInstancesTest(RedisServer server) {
        this.instance = StarterContexts.on(server)
                .withPropertyValues("distributed-semaphore.semaphores.reports.permits=2",
                        "distributed-semaphore.semaphores.reports.wait-time=30s",
                        "distributed-semaphore.semaphores.busy.permits=2")
                .withBean(Occupancy.class, () -> occupancy)
                .withBean(ReportService.class);
    }

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    @Test
    void neverMoreCallsInsideThanPermitsAcrossBothInstances() {
        instance.run(first -> instance.run(second -> {
            List<Future<String>> calls = new ArrayList<>();
            for (int i = 0; i < CALLERS; i++) {
                ReportService service = (i % 2 == 0 ? first : second).getBean(ReportService.class);
                calls.add(callers.submit(service::generate));
            }
            for (Future<String> call : calls) {
                // every caller is served within its wait time
                assertThat(call.get(60, TimeUnit.SECONDS)).isEqualTo("report");
            }
            assertThat(occupancy.max).as("most calls inside at once").hasValue(2);
            assertThat(occupancy.calls).hasValue(CALLERS);
            assertNothingHeld(first, "reports");
        }));
    }

    @Test
    void withoutWaitTheCallersBeyondThePermitsAreRejected() {
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            // one holder in each instance: both permits of the fleet are taken
            Future<String> holderOne = callers.submit(() -> first.getBean(ReportService.class).busy(gate));
            Future<String> holderTwo = callers.submit(() -> second.getBean(ReportService.class).busy(gate));
            gate.awaitEntered(2);

            List<Future<String>> extra = submitExtraCallers(first, second, service -> service.busy(null));
            for (Future<String> call : extra) {
                Throwable rejected = catchThrowable(() -> call.get(30, TimeUnit.SECONDS));
                assertThat(rejected).hasCauseInstanceOf(SemaphoreRejectedException.class);
                assertThat((SemaphoreRejectedException) rejected.getCause())
                        .extracting(SemaphoreRejectedException::getSemaphoreName,
                                SemaphoreRejectedException::getRequestedPermits)
                        .containsExactly("busy", 1);
            }
            gate.open();
            assertThat(holderOne.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(holderTwo.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertNothingHeld(first, "busy");
        }));
    }

    @Test
    void withoutWaitTheCallersBeyondThePermitsGetTheFallback() {
        instance.run(first -> instance.run(second -> {
            Gate gate = new Gate();
            Future<String> holderOne = callers.submit(() -> first.getBean(ReportService.class).busyOrFallback(gate));
            Future<String> holderTwo = callers.submit(() -> second.getBean(ReportService.class).busyOrFallback(gate));
            gate.awaitEntered(2);

            List<Future<String>> extra = submitExtraCallers(first, second, service -> service.busyOrFallback(null));
            for (Future<String> call : extra) {
                assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("fallback after: No permit of semaphore "
                        + "'busy' for 1 permit(s) within 0 ms");
            }
            gate.open();
            assertThat(holderOne.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(holderTwo.get(30, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(gate.entered()).isEqualTo(2);
            assertNothingHeld(first, "busy");
        }));
    }

    private List<Future<String>> submitExtraCallers(ApplicationContext first, ApplicationContext second,
                                                    ServiceCall call) {
        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < CALLERS - 2; i++) {
            ReportService service = (i % 2 == 0 ? first : second).getBean(ReportService.class);
            calls.add(callers.submit((Callable<String>) () -> call.apply(service)));
        }
        return calls;
    }

    private static void assertNothingHeld(ApplicationContext context, String semaphore) {
        SemaphoreRegistry registry = context.getBean(SemaphoreRegistry.class);
        await().untilAsserted(() -> assertThat(registry.semaphore(semaphore).state().used()).isZero());
    }

    @FunctionalInterface
    interface ServiceCall {
        String apply(ReportService service) throws Exception;
    }

    /** How many calls are inside the guarded method, shared by both instances (one JVM). */
    static class Occupancy {

        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();
        final AtomicInteger calls = new AtomicInteger();

        void enter() {
            calls.incrementAndGet();
            max.accumulateAndGet(inside.incrementAndGet(), Math::max);
        }

        void exit() {
            inside.decrementAndGet();
        }
    }

    static class ReportService {

        private final Occupancy occupancy;

        ReportService(Occupancy occupancy) {
            this.occupancy = occupancy;
        }

        @DistributedSemaphore("reports")
        public String generate() {
            occupancy.enter();
            try {
                // Stay until two calls have overlapped once: the maximum is sure to reach the
                // permits, and a third caller slipping in would push it above them.
                await().atMost(Duration.ofSeconds(30)).until(() -> occupancy.max.get() >= 2);
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                return "report";
            } finally {
                occupancy.exit();
            }
        }

        @DistributedSemaphore("busy")
        public String busy(Gate gate) {
            if (gate != null) {
                gate.pass();
            }
            return "done";
        }

        @DistributedSemaphore(value = "busy", fallbackMethod = "fallback")
        public String busyOrFallback(Gate gate) {
            return busy(gate);
        }

        String fallback(Gate gate, SemaphoreRejectedException rejection) {
            return "fallback after: " + rejection.getMessage();
        }
    }
}
