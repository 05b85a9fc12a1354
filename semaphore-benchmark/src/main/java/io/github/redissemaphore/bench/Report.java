package io.github.redissemaphore.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** Printing and the few statistics the measures need: medians, percentiles, ratios. */
final class Report {

    private Report() {
    }

    /** Prints the heading of one measure. */
    static void heading(String title, String detail) {
        System.out.printf("%n== %s ==%n%s%n%n", title, detail);
    }

    /** Prints one line, like printf, in a fixed locale so numbers look the same everywhere. */
    static void line(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
    }

    /** @return the median of the values */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    /** @return the nearest-rank percentile of the values */
    static long percentile(long[] values, int percentile) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    /** @return {@code a / b} as "0.85x", or "-" when either is unknown */
    static String ratio(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2fx", a / b);
    }

    /** @return a whole number with thousands separators: "12,345" */
    static String count(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%,.0f", value);
    }

    /** @return a figure with two decimals, or "-" */
    static String decimal(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    /** @return "evalsha 3, publish 1", the commands of a map by count */
    static String commands(Map<String, Long> counts) {
        return counts.isEmpty() ? "none" : counts.entrySet().stream()
                .map(entry -> entry.getKey() + " " + entry.getValue()).collect(Collectors.joining(", "));
    }
}
