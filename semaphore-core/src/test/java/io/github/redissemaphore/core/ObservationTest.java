package io.github.redissemaphore.core;

import io.github.redissemaphore.core.observation.DefaultSemaphoreObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreObservationContext;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The {@code semaphore.acquire} and {@code semaphore.hold} observations the engine makes, through
 * the plain API: names, key values, outcomes and parents.
 */
@RedisTest
class ObservationTest extends SemaphoreTestBase {

    private final TestObservationRegistry observations = TestObservationRegistry.create();
    /** Every semaphore context, in the order its observation started. */
    private final Queue<SemaphoreObservationContext> started = new ConcurrentLinkedQueue<>();
    /** Every semaphore context, in the order its observation stopped. */
    private final Queue<SemaphoreObservationContext> stopped = new ConcurrentLinkedQueue<>();

    ObservationTest(RedisServer server) {
        super(new StandaloneTarget(server));
        observations.observationConfig().observationHandler(new ObservationHandler<SemaphoreObservationContext>() {
            @Override
            public void onStart(SemaphoreObservationContext context) {
                started.add(context);
            }

            @Override
            public void onStop(SemaphoreObservationContext context) {
                stopped.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return context instanceof SemaphoreObservationContext;
            }
        });
    }

    @Test
    void anAcquisitionAndTheLeaseAreObservedUnderTheCallersObservation() {
        RedisSemaphore semaphore = observed().semaphore(name);
        Observation request = Observation.start("request", observations);
        Permit permit;
        try (Observation.Scope scope = request.openScope()) {
            permit = semaphore.tryAcquire().orElseThrow();
        }

        assertThat(observations).hasObservationWithNameEqualTo("semaphore.acquire").that()
                .hasContextualNameEqualTo("acquire " + name)
                .hasLowCardinalityKeyValue("name", name)
                .hasLowCardinalityKeyValue("outcome", "acquired")
                .doesNotHaveHighCardinalityKeyValueWithKey("key")
                .hasParentObservationEqualTo(request)
                .hasBeenStopped();
        assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasParentObservationEqualTo(request)
                .isNotStopped();

        permit.release();
        assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasContextualNameEqualTo("hold " + name)
                .hasLowCardinalityKeyValue("outcome", "released")
                .hasBeenStopped();
        request.stop();
    }

    @Test
    void aKeyedSemaphoreIsNamedByItsBaseWithTheKeyAsAHighCardinalityValue() {
        SemaphoreRegistry registry = observed();
        registry.semaphore(name + ":acme").tryAcquire().orElseThrow().release();
        // a base name with a ':' of its own, as the aspect passes it
        registry.semaphore("api:" + name, "globex", SemaphoreSettings.DEFAULTS).tryAcquire().orElseThrow().release();

        assertThat(contexts("semaphore.acquire")).extracting(SemaphoreObservationContext::semaphoreName,
                        SemaphoreObservationContext::baseName, SemaphoreObservationContext::key)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(name + ":acme", name, "acme"),
                        org.assertj.core.groups.Tuple.tuple("api:" + name + ":globex", "api:" + name, "globex"));
        assertThat(observations).hasObservationWithNameEqualTo("semaphore.acquire").that()
                .hasLowCardinalityKeyValue("name", name)
                .hasHighCardinalityKeyValue("key", "acme");
        assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasLowCardinalityKeyValue("name", name)
                .hasHighCardinalityKeyValue("key", "acme");
    }

    @Test
    void aRejectionIsAnOutcomeNotAnError() {
        RedisSemaphore semaphore = observed().semaphore(name);
        Permit held = semaphore.tryAcquire().orElseThrow();
        assertThat(semaphore.tryAcquire()).isEmpty();

        assertThat(acquisitions()).extracting(SemaphoreObservationContext::outcome)
                .containsExactly("acquired", "rejected");
        assertThat(acquisitions()).allSatisfy(context -> assertThat(context.getError()).isNull());
        held.release();
    }

    @Test
    void anInterruptedWaitAndACancelledFutureAreCancelled() throws Exception {
        RedisSemaphore semaphore = observed().semaphore(name);
        Permit held = semaphore.tryAcquire().orElseThrow();

        AtomicReference<Throwable> waiterFailure = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                semaphore.tryAcquire(Duration.ofSeconds(30));
            } catch (InterruptedException | RuntimeException e) {
                waiterFailure.set(e);
            }
        });
        waiter.start();
        await().until(() -> semaphore.localState().waiters() == 1);
        waiter.interrupt();
        waiter.join(10_000);
        assertThat(waiterFailure.get()).isInstanceOf(InterruptedException.class);

        CompletableFuture<Permit> future = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> semaphore.localState().waiters() == 1);
        future.cancel(true);

        await().until(() -> acquisitions().size() == 3 && acquisitions().stream().allMatch(c -> c.outcome() != null));
        assertThat(acquisitions()).extracting(SemaphoreObservationContext::outcome)
                .containsExactly("acquired", "cancelled", "cancelled");
        held.release();
    }

    @Test
    void redisDownIsAnError(@Dedicated RedisServer server) {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix()).observationRegistry(observations).build()) {
            RedisSemaphore semaphore = registry.semaphore(name);
            server.stop();

            assertThat(catchThrowable(semaphore::tryAcquire)).isInstanceOf(SemaphoreUnavailableException.class);
            assertThat(observations).hasObservationWithNameEqualTo("semaphore.acquire").that()
                    .hasLowCardinalityKeyValue("outcome", "error")
                    .assertThatError().isInstanceOf(SemaphoreUnavailableException.class);
        }
    }

    /**
     * Something other than Redis fails while an acquisition starts (here the application's
     * scheduler, shut down under the registry, refuses the tick of a queued wait): the caller hears
     * of it, on either path, its observation ends as an error instead of running forever, and the
     * queue entry its call made is taken back.
     */
    @Test
    void anAcquisitionThatFailsOutsideRedisEndsItsObservationAsAnError() {
        Permit held = newRegistry().semaphore(name).tryAcquire().orElseThrow();
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.setDaemon(true);
        scheduler.initialize();
        RedisSemaphore semaphore = newRegistry(builder -> builder.observationRegistry(observations)
                .taskScheduler(scheduler)).semaphore(name);
        scheduler.shutdown();

        Throwable sync = catchThrowable(() -> semaphore.tryAcquire(Duration.ofSeconds(5)));
        CompletableFuture<Permit> async = semaphore.acquireAsync(1, Duration.ofSeconds(5));

        assertThat(sync).isInstanceOf(SemaphoreException.class).hasCauseInstanceOf(RejectedExecutionException.class);
        assertThat(async).failsWithin(Duration.ofSeconds(5)).withThrowableThat()
                .havingCause().isInstanceOf(RejectedExecutionException.class);
        await().atMost(Duration.ofSeconds(5)).until(() -> acquisitions().stream().filter(c -> c.outcome() != null)
                .count() == 2);
        assertThat(acquisitions()).extracting(SemaphoreObservationContext::outcome).containsExactly("error", "error");
        assertThat(stopped).containsAll(acquisitions());
        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("semaphore.acquire", 2)
                .forAllObservationsWithNameEqualTo("semaphore.acquire", observation -> observation.assertThatError()
                        .isInstanceOf(RejectedExecutionException.class));
        assertThat(semaphore.localState().waiters()).isZero();
        await().atMost(Duration.ofSeconds(5)).until(() -> semaphore.state().waiters().isEmpty());
        held.release();
    }

    @Test
    void aLostLeaseEndsItsHoldAsLost() {
        RedisSemaphore semaphore = observed().semaphore(name, SemaphoreSettings.DEFAULTS.withLeaseTime(
                Duration.ofMillis(900)));
        Permit permit = semaphore.tryAcquire().orElseThrow();
        semaphore.forceRelease(permit.id());

        // The lease is no longer held (one compare-and-set) before its hold observation is stopped
        // as lost, on the thread that heard of it: the observation is awaited, not read once.
        await().untilAsserted(() -> assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasLowCardinalityKeyValue("outcome", "lost")
                .hasBeenStopped());
        assertThat(permit.isHeld()).isFalse();
    }

    @Test
    void aPartialReleaseKeepsTheHoldGoingUntilTheLastPermitGoesBack() throws InterruptedException {
        RedisSemaphore semaphore = observed().semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(3));
        Permit permit = semaphore.tryAcquire(3, Duration.ZERO).orElseThrow();

        permit.release(2);

        assertThat(contexts("semaphore.hold")).singleElement()
                .satisfies(hold -> assertThat(hold.outcome()).as("still held").isNull());
        assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that().isNotStopped();
        permit.release();
        assertThat(contexts("semaphore.hold")).singleElement()
                .satisfies(hold -> assertThat(hold.outcome()).isEqualTo("released"));
        assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that().hasBeenStopped();
    }

    @Test
    void anAdoptedLeaseIsHeldUnderTheAdoptersObservationAndEndsAsAdoptedWhereItLeft() {
        TestObservationRegistry adopterObservations = TestObservationRegistry.create();
        RedisSemaphore former = observed().semaphore(name);
        RedisSemaphore adopter = newRegistry(builder -> builder.observationRegistry(adopterObservations))
                .semaphore(name);
        Permit taken = former.tryAcquire().orElseThrow();

        Observation job = Observation.start("job", adopterObservations);
        Permit adopted;
        try (Observation.Scope scope = job.openScope()) {
            adopted = adopter.adopt(taken.id()).orElseThrow();
        }

        assertThat(adopterObservations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasParentObservationEqualTo(job)
                .isNotStopped();
        // the former holder hears of the hand-over (its inbox, or its next renewal): not a loss
        await().untilAsserted(() -> assertThat(observations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasLowCardinalityKeyValue("outcome", "adopted")
                .hasBeenStopped());
        assertThat(taken.isHeld()).isFalse();
        adopted.release();
        assertThat(adopterObservations).hasObservationWithNameEqualTo("semaphore.hold").that()
                .hasLowCardinalityKeyValue("outcome", "released")
                .hasBeenStopped();
        job.stop();
    }

    @Test
    void theConventionIsReplaceable() {
        DefaultSemaphoreObservationConvention custom = new DefaultSemaphoreObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(SemaphoreObservationContext context) {
                return super.getLowCardinalityKeyValues(context).and("team", "billing");
            }
        };
        newRegistry(builder -> builder.observationRegistry(observations).observationConvention(custom))
                .semaphore(name).tryAcquire().orElseThrow().release();

        assertThat(observations).hasObservationWithNameEqualTo("semaphore.acquire").that()
                .hasLowCardinalityKeyValue("team", "billing")
                .hasLowCardinalityKeyValue("outcome", "acquired");
    }

    @Test
    void aFailingHandlerNeverKeepsAPermitFromComingBack() {
        ObservationRegistry failing = ObservationRegistry.create();
        failing.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                throw new IllegalStateException("a handler bug");
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        RedisSemaphore semaphore = newRegistry(builder -> builder.observationRegistry(failing)).semaphore(name);

        semaphore.tryAcquire().orElseThrow().release();

        assertThat(semaphore.tryAcquire()).isPresent().get().satisfies(Permit::release);
        assertThat(semaphore.state().used()).isZero();
    }

    private SemaphoreRegistry observed() {
        return newRegistry(builder -> builder.observationRegistry(observations));
    }

    private List<SemaphoreObservationContext> acquisitions() {
        return contexts("semaphore.acquire");
    }

    private List<SemaphoreObservationContext> contexts(String observation) {
        return started.stream().filter(context -> observation.equals(context.getName())).toList();
    }
}
