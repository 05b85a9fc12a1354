package io.github.redissemaphore.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.node.ObjectNode;

/**
 * What to run and for how long, from system properties ({@code -Dbench.rounds=5} on the Maven
 * command line). The defaults keep a full run to about three minutes on a 2-core machine.
 *
 * @param rounds          measured rounds per thread count of the throughput measure; the median is shown
 * @param roundDuration   length of one throughput round (the warm-up round is as long)
 * @param threads         thread counts of the throughput measure
 * @param redissonPool    Redisson's connection pool (and minimum idle connections) on the main client
 * @param handoffs        measured hand-offs per contender, after a tenth as many (at least 50) warm-up ones
 * @param settle          pause between a waiter starting to wait and the holder releasing, so the
 *                        waiter is really waiting (queued, subscribed) when the clock starts
 * @param waiters         callers that wait at once in the idle-waiters measure
 * @param waitWindow      how long their commands are counted
 * @param holders         holder counts of the scaling measure
 * @param scalingWaiters  waiters queued in the second column of the scaling measure
 * @param scalingPairs    acquire + release pairs whose Redis cost is read per holder count
 * @param renewalPermits  permits held with a short lease in the renewal measure
 * @param renewalTicks    renewal ticks counted
 * @param costPairs       uncontended acquire + release pairs counted per contender by the Redis-cost measure
 * @param costContendedPairs completed pairs counted per contender in its contended case
 * @param measures        which measures to run: throughput, handoff, waiters, holders, renewal, rediscost
 * @param results         the results file to write the figures to once the run is over ({@code bench.results},
 *                        relative to the directory the command runs in); null, the default, writes none, so
 *                        that a short run (CI's) never replaces the repository's docs/benchmark-results.json
 */
record BenchmarkOptions(int rounds, Duration roundDuration, int[] threads, int redissonPool, int handoffs,
                        Duration settle, int waiters, Duration waitWindow, int[] holders, int scalingWaiters,
                        int scalingPairs, int renewalPermits, int renewalTicks, int costPairs,
                        int costContendedPairs, Set<String> measures, @Nullable Path results) {

    /** Maven's main class: the benchmark runs in Maven's JVM (exec:java), whose arguments are the mvn command's. */
    private static final String MAVEN_LAUNCHER = "org.codehaus.plexus.classworlds.launcher.Launcher";

    static final Set<String> ALL = Set.of("throughput", "handoff", "waiters", "holders", "renewal", "rediscost");

    static BenchmarkOptions fromSystemProperties() {
        Set<String> measures = new TreeSet<>(Arrays.asList(text("measures", String.join(",", ALL)).split(",")));
        if (!ALL.containsAll(measures)) {
            throw new IllegalArgumentException("bench.measures must be a comma-separated subset of " + ALL
                    + ", but was " + measures);
        }
        return new BenchmarkOptions(
                number("rounds", 3),
                Duration.ofMillis((long) (decimal("seconds", 2) * 1000)),
                numbers("threads", "1,8,64"),
                number("redissonPool", 64),
                number("handoffs", 1000),
                Duration.ofMillis(number("settleMillis", 2)),
                number("waiters", 100),
                Duration.ofMillis((long) (decimal("waitSeconds", 5) * 1000)),
                numbers("holders", "10,1000,10000"),
                number("scalingWaiters", 1000),
                number("pairs", 2000),
                number("renewalPermits", 1000),
                number("renewalTicks", 3),
                positive("costPairs", 2000),
                positive("costContendedPairs", 2000),
                measures,
                text("results", "").isEmpty() ? null : Path.of(text("results", "")));
    }

    /** @return whether the measure of that name is to run */
    boolean runs(String measure) {
        return measures.contains(measure);
    }

    /** @return the hand-offs before the measured ones */
    int handoffWarmup() {
        return Math.max(handoffs / 10, 50);
    }

    /** @return the property settings, for the header of the report */
    String describe() {
        return String.format("bench.rounds=%d bench.seconds=%s bench.threads=%s bench.handoffs=%d bench.waiters=%d"
                        + " bench.waitSeconds=%s bench.holders=%s bench.pairs=%d bench.renewalPermits=%d"
                        + " bench.renewalTicks=%d bench.costPairs=%d bench.costContendedPairs=%d bench.results=%s", rounds,
                roundDuration.toMillis() / 1000.0, join(threads), handoffs, waiters, waitWindow.toMillis() / 1000.0,
                join(holders), scalingPairs, renewalPermits, renewalTicks, costPairs, costContendedPairs,
                results == null ? "(none)" : results);
    }

    /** Puts every option, by its property name less "bench.", defaults included. */
    void record(ObjectNode into) {
        into.put("rounds", rounds);
        into.put("seconds", roundDuration.toMillis() / 1000.0);
        into.put("threads", join(threads));
        into.put("redissonPool", redissonPool);
        into.put("handoffs", handoffs);
        into.put("settleMillis", settle.toMillis());
        into.put("waiters", waiters);
        into.put("waitSeconds", waitWindow.toMillis() / 1000.0);
        into.put("holders", join(holders));
        into.put("scalingWaiters", scalingWaiters);
        into.put("pairs", scalingPairs);
        into.put("renewalPermits", renewalPermits);
        into.put("renewalTicks", renewalTicks);
        into.put("costPairs", costPairs);
        into.put("costContendedPairs", costContendedPairs);
        into.put("measures", String.join(",", measures));
        into.put("results", results == null ? null : results.toString());
    }

    /**
     * @return the command this run was started with: the mvn command line when it runs in Maven's JVM
     *         (as {@code ./mvnw ...}: the wrapper hands its arguments on), else {@code java}, the
     *         {@code bench.*} properties set and this class
     */
    static String command() {
        String java = System.getProperty("sun.java.command", "");
        if (java.startsWith(MAVEN_LAUNCHER)) {
            return "./mvnw" + java.substring(MAVEN_LAUNCHER.length());
        }
        StringBuilder command = new StringBuilder("java");
        properties().forEach((name, value) -> command.append(" -D").append(name).append('=').append(value));
        return command.append(' ').append(SemaphoreBenchmark.class.getName()).toString();
    }

    /** @return the {@code bench.*} system properties set, by name: those that differ from the defaults */
    static Map<String, String> properties() {
        Map<String, String> set = new TreeMap<>();
        System.getProperties().stringPropertyNames().stream().filter(name -> name.startsWith("bench."))
                .forEach(name -> set.put(name, System.getProperty(name)));
        return set;
    }

    private static String join(int[] values) {
        return String.join(",", Arrays.stream(values).mapToObj(String::valueOf).toList());
    }

    private static String text(String name, String fallback) {
        return System.getProperty("bench." + name, fallback).trim();
    }

    private static int number(String name, int fallback) {
        return Integer.parseInt(text(name, String.valueOf(fallback)));
    }

    private static int positive(String name, int fallback) {
        int value = number(name, fallback);
        if (value < 1) {
            throw new IllegalArgumentException("bench." + name + " must be a whole number of at least 1, but was "
                    + value);
        }
        return value;
    }

    private static double decimal(String name, double fallback) {
        return Double.parseDouble(text(name, String.valueOf(fallback)));
    }

    private static int[] numbers(String name, String fallback) {
        return Arrays.stream(text(name, fallback).split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
    }
}
