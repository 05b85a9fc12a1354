package io.github.redissemaphore.core;

import static io.github.redissemaphore.core.RaceFixture.awaitIdle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.redissemaphore.core.SemaphoreRejectedException.Reason;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.github.redissemaphore.test.SchedulingNoise;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The queue's bound ({@link SemaphoreSettings#maxWaiters()}) and the predicted wait, through the
 * registry, against real Redis: the bound holds when two JVMs and threads in each rush into the
 * queue at once, callers that leave make room, a refusal says why and when to come back, the
 * prediction is within 30 % of the actual wait on a steady load, {@code state()} tells each
 * waiter's place and predicted wait, and a caller predicted to time out is refused at once when
 * the option is on. The script's own invariants are
 * {@link QueueBoundTest}'s.
 */
@RedisTest
class QueueBoundBehaviourTest {

    private final RedisServer server;
    private final RaceFixture fixture;
    private final SchedulingNoise noise;
    private final StringRedisTemplate redis;
    private String name;

    QueueBoundBehaviourTest(RedisServer server) {
        this.server = server;
        this.fixture = new RaceFixture(server);
        this.noise = fixture.noise();
        this.redis = new StringRedisTemplate(server.connectionFactory());
    }

    @BeforeEach
    void nameAfterTest(TestInfo test) {
        name = RaceFixture.nameAfter(test);
    }

    @AfterEach
    void closeAll() {
        fixture.close();
    }

    // --- the bound under races ------------------------------------------------------------------------------

    /**
     * Two separate JVMs of 8 threads each ask at one wall-clock moment for the one permit, which
     * this JVM holds, with max-waiters 3. Redis is sampled all along: never more than 3 waiting;
     * the 3 that queued time out, the others are refused as full at once, and nothing is left.
     */
    @Test
    @Timeout(120)
    void twoJvmsOfEightThreadsRushingIntoTheQueueNeverLeaveMoreThanTheBoundWaiting() throws Exception {
        int bound = 3;
        RedisSemaphore here = fixture.registry(server.connectionFactory())
                .semaphore(name, SemaphoreSettings.DEFAULTS.withMaxWaiters(bound));
        Permit held = here.tryAcquire().orElseThrow(() -> new AssertionError("no permit"));
        long startAt = System.currentTimeMillis() + 6000;
        List<Process> crowds = new ArrayList<>();
        for (int jvm = 0; jvm < 2; jvm++) {
            crowds.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                    QueueCrowdProcess.class.getName(), server.host(), String.valueOf(server.port()),
                    server.keyPrefix(), name, "1", String.valueOf(bound), "8", "3000", "50", String.valueOf(startAt))
                    .redirectErrorStream(true).start());
        }
        try {
            QueueSampler sampler = new QueueSampler(name);
            List<List<String>> outputs = new ArrayList<>();
            for (Process crowd : crowds) {
                outputs.add(readAll(crowd));
            }
            sampler.stop();
            Map<String, Long> outcomes = outputs.stream().flatMap(lines -> QueueCrowdProcess.outcomes(lines).stream())
                    .collect(Collectors.groupingBy(Function.identity(), TreeMap::new, Collectors.counting()));
            System.out.printf("two JVMs x 8 threads, max-waiters %d: %s; most waiting seen %d in %d samples%n",
                    bound, outcomes, sampler.most(), sampler.samples());
            assertThat(sampler.most()).as("waiters seen in Redis").isLessThanOrEqualTo(bound);
            assertThat(outcomes.keySet()).as("outcomes").containsOnly("queue-full", "wait-timed-out");
            assertThat(outcomes.get("queue-full")).as("refused as full").isPositive();
            assertThat(outcomes.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(16);
        } finally {
            crowds.forEach(Process::destroyForcibly);
        }
        held.release();
        awaitIdle(here, "after the crowds");
        fixture.assertCleanKeys(name, 1);
    }

    /** The same rush by two registries of this JVM, 12 threads each, at a CountDownLatch. */
    @Test
    @Timeout(60)
    void twoRegistriesOfTwelveThreadsEachRushingIntoTheQueueNeverLeaveMoreThanTheBoundWaiting() throws Exception {
        int bound = 4;
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withPermits(2).withMaxWaiters(bound);
        List<RedisSemaphore> jvms = List.of(fixture.registry(server.connectionFactory()).semaphore(name, settings),
                fixture.registry(server.connectionFactory()).semaphore(name, settings));
        List<Permit> held = List.of(jvms.get(0).tryAcquire().orElseThrow(), jvms.get(1).tryAcquire().orElseThrow());
        ExecutorService callers = fixture.pool(24);
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<String>> calls = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            RedisSemaphore jvm = jvms.get(i % 2);
            calls.add(CompletableFuture.supplyAsync(() -> {
                try {
                    go.await();
                    jvm.acquire(1, Duration.ofSeconds(2)).release();
                    return "granted";
                } catch (SemaphoreRejectedException e) {
                    return e.reason().tag();
                } catch (Exception e) {
                    return "error " + e;
                }
            }, callers));
        }
        QueueSampler sampler = new QueueSampler(name);
        go.countDown();
        Map<String, Long> outcomes = new TreeMap<>();
        for (CompletableFuture<String> call : calls) {
            outcomes.merge(call.get(30, TimeUnit.SECONDS), 1L, Long::sum);
        }
        sampler.stop();
        System.out.printf("two registries x 12 threads, max-waiters %d: %s; most waiting seen %d in %d samples%n",
                bound, outcomes, sampler.most(), sampler.samples());
        assertThat(sampler.most()).as("waiters seen in Redis").isLessThanOrEqualTo(bound);
        assertThat(outcomes.keySet()).containsOnly("queue-full", "wait-timed-out");
        assertThat(outcomes.get("queue-full")).isGreaterThanOrEqualTo(24 - bound);
        held.forEach(Permit::release);
        awaitIdle(jvms.get(0), "after the rush");
        fixture.assertCleanKeys(name, 2);
    }

    /** The waiters seen in Redis, sampled as fast as Redis answers until stopped. */
    private final class QueueSampler {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong most = new AtomicLong();
        private final AtomicLong samples = new AtomicLong();
        private final Thread thread;

        QueueSampler(String semaphore) {
            String queue = SemaphoreKeys.of(server.keyPrefix(), semaphore).all().get(2);
            thread = new Thread(() -> {
                while (running.get()) {
                    Long size = redis.opsForZSet().zCard(queue);
                    most.accumulateAndGet(size == null ? 0 : size, Math::max);
                    samples.incrementAndGet();
                }
            }, "queue-sampler");
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join();
        }

        long most() {
            return most.get();
        }

        long samples() {
            return samples.get();
        }
    }

    private static List<String> readAll(Process process) throws Exception {
        List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lines.add(line);
            }
        }
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the crowd process ended").isTrue();
        return lines;
    }

    // --- room made, and what a refusal says -----------------------------------------------------------------

    /**
     * max-waiters 1: a second waiter is refused at once, as full, in words; the first one's cancel,
     * its timeout and its JVM's death each make room for the next.
     */
    @Test
    @Timeout(90)
    void waitersThatLeaveByCancelTimeoutOrDeathMakeRoomForTheNext() throws Exception {
        SemaphoreSettings settings = SemaphoreSettings.DEFAULTS.withMaxWaiters(1);
        RedisSemaphore semaphore = fixture.registry(server.connectionFactory(),
                b -> b.waiterHeartbeat(Duration.ofSeconds(2))).semaphore(name, settings);
        Permit held = semaphore.tryAcquire().orElseThrow(() -> new AssertionError("no permit"));

        CompletableFuture<Permit> first = semaphore.acquireAsync(1, Duration.ofSeconds(60));
        await().until(() -> semaphore.state().waiters().size() == 1);
        long asked = System.nanoTime();
        assertThatThrownBy(() -> semaphore.acquire(1, Duration.ofSeconds(60)))
                .isInstanceOfSatisfying(SemaphoreRejectedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL);
                    assertThat(e.getMessage()).contains("queue full: 1 of 1 waiting");
                });
        noise.assertTookLessThan("refused at once", asked, System.nanoTime(), Duration.ofMillis(500));

        // cancel
        first.cancel(true);
        await().until(() -> semaphore.state().waiters().isEmpty());
        CompletableFuture<Permit> second = semaphore.acquireAsync(1, Duration.ofMillis(800));
        await().until(() -> semaphore.state().waiters().size() == 1);
        // timeout
        assertThatThrownBy(() -> second.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(SemaphoreRejectedException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMED_OUT));
        await().until(() -> semaphore.state().waiters().isEmpty());
        // death: another JVM waits, and is killed; its heartbeat (2 s) lapses
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                WaiterProcess.class.getName(), server.host(), String.valueOf(server.port()), server.keyPrefix(), name,
                "1", "1", "30000", "2000", "200", "300000", "1")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String childPid = "/" + child.pid() + "/";
            await().atMost(Duration.ofSeconds(30)).until(() -> semaphore.state().waiters().stream()
                    .anyMatch(waiter -> waiter.owner().contains(childPid)));
            assertThat(semaphore.acquireAsync(1, Duration.ofSeconds(60)))
                    .failsWithin(Duration.ofSeconds(5)).withThrowableThat().havingCause()
                    .isInstanceOfSatisfying(SemaphoreRejectedException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL));
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            long killed = System.nanoTime();
            CompletableFuture<Permit> third = await().atMost(Duration.ofSeconds(15)).until(() -> {
                CompletableFuture<Permit> attempt = semaphore.acquireAsync(1, Duration.ofSeconds(60));
                try {
                    attempt.get(200, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException stillWaiting) {
                    return attempt;
                } catch (ExecutionException refused) {
                    return null;
                }
                return attempt;
            }, attempt -> attempt != null);
            noise.assertTookLessThan("room again after the waiter's JVM died", killed, System.nanoTime(),
                    Duration.ofSeconds(6));
            held.release();
            third.get(10, TimeUnit.SECONDS).release();
        } finally {
            child.destroyForcibly();
        }
        awaitIdle(semaphore, "at the end");
    }

    /**
     * Once a hold has been measured (one that ended while someone waited), a caller refused as
     * full learns the predicted wait as retryAfter(), and the listener hears the refusal's reason
     * and every queued caller's position with its predicted wait.
     */
    @Test
    @Timeout(60)
    void aRefusalCarriesThePredictedWaitAndTheListenerHearsPositionsAndReasons() throws Exception {
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        SemaphoreListener listener = new SemaphoreListener() {
            @Override
            public void queued(String semaphore, int permits, int position, Duration predictedWait) {
                heard.add("queued " + position + " " + (predictedWait == null ? "-" : "known"));
            }

            @Override
            public void rejected(String semaphore, int permits, Reason reason) {
                heard.add("rejected " + reason.tag());
            }
        };
        RedisSemaphore semaphore = fixture.registry(server.connectionFactory(), b -> b.listener(listener))
                .semaphore(name, SemaphoreSettings.DEFAULTS.withMaxWaiters(2));
        measureAHold(semaphore, Duration.ofMillis(300));
        Permit held = semaphore.tryAcquire().orElseThrow(() -> new AssertionError("no permit"));
        CompletableFuture<Permit> first = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        CompletableFuture<Permit> second = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> semaphore.state().waiters().size() == 2);
        // state() tells each waiter's place and predicted wait: about 1 and 2 holds of ~300 ms
        List<SemaphoreState.Waiter> queue = semaphore.state().waiters();
        assertThat(queue).extracting(SemaphoreState.Waiter::position).containsExactly(1, 2);
        assertThat(queue.get(0).predictedWait()).isNotNull().isBetween(Duration.ofMillis(150), Duration.ofMillis(900));
        assertThat(queue.get(1).predictedWait()).isNotNull().isGreaterThan(queue.get(0).predictedWait());
        SemaphoreRejectedException refused = (SemaphoreRejectedException) catchRejection(
                () -> semaphore.acquire(1, Duration.ofSeconds(30)));
        assertThat(refused.reason()).isEqualTo(Reason.QUEUE_FULL);
        // the third in line behind one permit held ~300 ms: about 3 x 300 ms
        assertThat(refused.retryAfter()).hasValueSatisfying(wait -> assertThat(wait.toMillis()).isBetween(450L, 1800L));
        assertThat(refused.getMessage()).contains("queue full: 2 of 2 waiting", "predicted wait");
        assertThat(heard).contains("queued 1 known", "queued 2 known", "rejected queue-full");
        held.release();
        first.get(10, TimeUnit.SECONDS).release();
        second.get(10, TimeUnit.SECONDS).release();
        awaitIdle(semaphore, "at the end");
    }

    /** One hold of {@code hold} that ends while a caller waits, which the semaphore measures. */
    private static void measureAHold(RedisSemaphore semaphore, Duration hold) throws Exception {
        Permit first = semaphore.tryAcquire().orElseThrow(() -> new AssertionError("no permit"));
        CompletableFuture<Permit> waiting = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> semaphore.state().waiters().size() == 1);
        Thread.sleep(hold.toMillis());
        first.release();
        waiting.get(10, TimeUnit.SECONDS).release();
    }

    private static Throwable catchRejection(Callable call) {
        try {
            call.call();
        } catch (Throwable e) {
            return e;
        }
        throw new AssertionError("not refused");
    }

    @FunctionalInterface
    private interface Callable {
        void call() throws Exception;
    }

    // --- the prediction ------------------------------------------------------------------------------------

    /**
     * A steady load: 12 callers in a loop on 2 permits, each holding 200 ms, so 10 wait at any
     * time. After a warm-up, the predicted wait of each queued caller (heard on its own thread by
     * the listener) is within 30 % of the wait it had, widened by the scheduler's lateness.
     */
    @Test
    @Timeout(120)
    void onASteadyLoadEachPredictedWaitIsWithinThirtyPercentOfTheActualWait() throws Exception {
        ThreadLocal<Duration> predicted = new ThreadLocal<>();
        SemaphoreListener listener = new SemaphoreListener() {
            @Override
            public void queued(String semaphore, int permits, int position, Duration predictedWait) {
                predicted.set(predictedWait);
            }
        };
        RedisSemaphore semaphore = fixture.registry(server.connectionFactory(), b -> b.listener(listener))
                .semaphore(name, SemaphoreSettings.DEFAULTS.withPermits(2));
        int callers = 12;
        int rounds = 8;
        int warmUp = 3;
        long holdMs = 200;
        ExecutorService pool = fixture.pool(callers);
        List<double[]> samples = Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        for (int c = 0; c < callers; c++) {
            loops.add(CompletableFuture.runAsync(() -> {
                for (int round = 0; round < rounds; round++) {
                    predicted.remove();
                    long asked = System.nanoTime();
                    try {
                        Permit permit = semaphore.acquire(1, Duration.ofSeconds(30));
                        long waited = System.nanoTime() - asked;
                        Duration prediction = predicted.get();
                        if (round >= warmUp && prediction != null) {
                            samples.add(new double[] {prediction.toMillis(), waited / 1e6});
                        }
                        Thread.sleep(holdMs);
                        permit.release();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }, pool));
        }
        CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        double late = noise.during(start, System.nanoTime()).toMillis();
        double worst = 0;
        double sum = 0;
        for (double[] sample : samples) {
            double error = Math.abs(sample[0] - sample[1]) / sample[1];
            worst = Math.max(worst, error);
            sum += error;
        }
        System.out.printf("steady load (2 permits, holds of %d ms, %d callers): %d predictions, mean error %.1f %%,"
                + " worst %.1f %% (timer up to %.0f ms late)%n", holdMs, callers, samples.size(),
                100 * sum / samples.size(), 100 * worst, late);
        assertThat(samples.size()).as("predictions heard after the warm-up").isGreaterThan(callers * 3);
        for (double[] sample : samples) {
            assertThat(Math.abs(sample[0] - sample[1])).as("predicted %.0f ms, waited %.0f ms", sample[0], sample[1])
                    .isLessThanOrEqualTo(0.3 * sample[1] + late);
        }
        awaitIdle(semaphore, "after the load");
    }

    /**
     * With rejectPredictedTimeouts, behind 4 waiters of one permit held about 300 ms: a caller
     * allowing 300 ms (predicted about 1.5 s) is refused at once, with the prediction; one
     * allowing 30 s queues.
     */
    @Test
    @Timeout(60)
    void aCallerPredictedToWaitLongerThanItAllowsIsRefusedAtOnceAndOneWithTimeEnoughQueues() throws Exception {
        RedisSemaphore semaphore = fixture.registry(server.connectionFactory())
                .semaphore(name, SemaphoreSettings.DEFAULTS.withRejectPredictedTimeouts(true));
        measureAHold(semaphore, Duration.ofMillis(300));
        Permit held = semaphore.tryAcquire().orElseThrow(() -> new AssertionError("no permit"));
        List<CompletableFuture<Permit>> ahead = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ahead.add(semaphore.acquireAsync(1, Duration.ofSeconds(30)));
        }
        await().until(() -> semaphore.state().waiters().size() == 4);
        long asked = System.nanoTime();
        SemaphoreRejectedException refused = (SemaphoreRejectedException) catchRejection(
                () -> semaphore.acquire(1, Duration.ofMillis(300)));
        noise.assertTookLessThan("refused at once", asked, System.nanoTime(), Duration.ofMillis(150));
        assertThat(refused.reason()).isEqualTo(Reason.PREDICTED_WAIT_TOO_LONG);
        assertThat(refused.retryAfter()).hasValueSatisfying(wait -> assertThat(wait).isGreaterThan(Duration.ofMillis(300)));
        assertThat(semaphore.state().waiters()).as("the refused caller left nothing in the queue").hasSize(4);
        CompletableFuture<Permit> patient = semaphore.acquireAsync(1, Duration.ofSeconds(30));
        await().until(() -> semaphore.state().waiters().size() == 5);
        held.release();
        for (CompletableFuture<Permit> waiter : ahead) {
            waiter.get(10, TimeUnit.SECONDS).release();
        }
        patient.get(10, TimeUnit.SECONDS).release();
        awaitIdle(semaphore, "at the end");
    }
}
