package io.github.redissemaphore.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** What the run ran on and how busy the machine was: the figures of the results file's {@code run.machine}. */
final class Machine {

    private Machine() {
    }

    /** @return the first "model name" of /proc/cpuinfo, if there is one */
    static Optional<String> cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).trim()).findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** @return the 1, 5 and 15-minute load averages of /proc/loadavg, else the JVM's 1-minute one */
    static double[] loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return Arrays.stream(fields, 0, 3).mapToDouble(Double::parseDouble).toArray();
        } catch (IOException | RuntimeException e) {
            return new double[] {ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()};
        }
    }

    /** @return e.g. "Linux 6.1.0 (amd64)" */
    static String os() {
        return System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                + System.getProperty("os.arch") + ")";
    }

    /** Puts the cores, CPU model, OS and {@code loadAtStart} into {@code into}. */
    static void record(ObjectNode into, double[] loadAtStart) {
        into.put("cores", Runtime.getRuntime().availableProcessors());
        into.put("cpuModel", cpuModel().orElse("unknown"));
        into.put("os", os());
        loads(into.putArray("loadAverageAtStart"), loadAtStart);
    }

    /** Puts the 1, 5 and 15-minute load averages, 2 decimals. */
    static void loads(ArrayNode into, double[] loads) {
        for (double load : loads) {
            into.add(Math.round(load * 100) / 100.0);
        }
    }

    /**
     * @return the JVM's -X and -XX flags, those that change how fast it runs (the benchmark runs in
     *         Maven's JVM: .mvn/jvm.config's, e.g. the C1 compiler alone)
     */
    static List<String> jvmFlags() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(argument -> argument.startsWith("-X")).toList();
    }
}
