package io.github.redissemaphore.sample.demo;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The verdict of a demo run and its final table.
 *
 * @param redis     where the fleet's Redis was
 * @param instances how many instances shared it
 * @param reports   the report burst against {@code reports}
 * @param exports   the export burst against {@code exports:<tenant>}, worst tenant's peak
 * @param exportCap the same calls against the cap of all tenants together ({@code total-permits})
 * @param tenants   each tenant's exports, the flooding one first
 * @param took      how long the bursts ran
 */
public record DemoResult(String redis, int instances, LimitCheck reports, LimitCheck exports, LimitCheck exportCap,
                         List<TenantExports> tenants, Duration took) {

    public DemoResult {
        tenants = List.copyOf(tenants);
    }

    /** Exit status: the limit held and every call got a permit or a proper 429 (one naming its reason). */
    public static final int PASSED = 0;
    /** Exit status: more calls ran at once than permits allow. */
    public static final int LIMIT_EXCEEDED = 1;
    /** Exit status: some call ended in neither a permit nor a proper 429. */
    public static final int CALLS_FAILED = 2;

    /** @return the checks, in table order */
    public List<LimitCheck> checks() {
        return List.of(reports, exports, exportCap);
    }

    /** @return the checks that each hold every call once (the cap's are the exports' again) */
    private List<LimitCheck> calls() {
        return List.of(reports, exports);
    }

    /** @return whether every limit held */
    public boolean limitHeld() {
        return checks().stream().allMatch(LimitCheck::held);
    }

    /** @return how many calls ended in neither a permit nor a 429 */
    public int failedCalls() {
        return calls().stream().mapToInt(check -> check.count(Outcome.FAILED)).sum();
    }

    /** @return {@link #PASSED}, {@link #LIMIT_EXCEEDED} or {@link #CALLS_FAILED} */
    public int exitCode() {
        if (!limitHeld()) {
            return LIMIT_EXCEEDED;
        }
        return failedCalls() > 0 ? CALLS_FAILED : PASSED;
    }

    /** @return the final table and a one-line verdict */
    public String table() {
        String format = "  %-10s %7s %12s %6s %7s %8s %9s %7s %9s %9s%n";
        StringBuilder table = new StringBuilder();
        table.append(String.format(format, "semaphore", "permits", "max inside", "calls", "served", "refused",
                "timed out", "failed", "wait p50", "wait p99"));
        table.append(String.format(format, "", "", "at once", "", "", "at once", "(429)", "", "", ""));
        for (LimitCheck check : calls()) {
            table.append(String.format(format, check.semaphore(), check.permits(), check.maxInside(), check.total(),
                    check.count(Outcome.SERVED), check.count(Outcome.REFUSED), check.count(Outcome.REJECTED),
                    check.count(Outcome.FAILED), check.waitPercentile(50) + " ms", check.waitPercentile(99) + " ms"));
        }
        table.append(String.format("  %-10s %7s %12s   (all tenants together)%n", exportCap.semaphore(),
                exportCap.permits(), exportCap.maxInside()));
        calls().forEach(check -> table.append(refusals(check)));
        tenants.forEach(tenant -> table.append(tenant.line()));
        table.append(fairness());
        table.append(String.format("  %d instances, one Redis (%s), bursts took %.1f s%n", instances, redis,
                took.toMillis() / 1000.0));
        table.append(verdict()).append(System.lineSeparator());
        return table.toString();
    }

    /**
     * @return what the calls of {@code check} refused at once were told, e.g. "reports: 9 refused at once
     *         (429 queue-full), told Retry-After 1 s (5), 2 s (4)"; empty when none was
     */
    private static String refusals(LimitCheck check) {
        int refused = check.count(Outcome.REFUSED);
        if (refused == 0) {
            return "";
        }
        Map<Integer, Long> told = check.retryAfters();
        long unpredicted = refused - told.values().stream().mapToLong(Long::longValue).sum();
        String advised = told.entrySet().stream().map(each -> each.getKey() + " s (" + each.getValue() + ")")
                .collect(Collectors.joining(", "));
        return String.format("  %s: %d refused at once (429 %s)%s%s%n", check.semaphore(), refused,
                String.join(", ", check.refusalReasons()), advised.isEmpty() ? "" : ", told Retry-After " + advised,
                unpredicted == 0 ? "" : ", " + unpredicted + " before any hold was measured: no Retry-After");
    }

    /** @return what the tenants' waits say: the flooding one queued, the others were still served */
    private String fairness() {
        if (tenants.size() < 2 || !tenants.get(0).flooding()) {
            return "";
        }
        TenantExports flooding = tenants.get(0);
        long othersWorst = tenants.stream().skip(1).mapToLong(tenant -> tenant.check().waitPercentile(100)).max()
                .orElse(0);
        return String.format("  %s queued behind its own %d permits; the other tenants waited at most %d ms"
                        + " (%s up to %d ms)%n", flooding.tenant(), flooding.check().permits(), othersWorst,
                flooding.tenant(), flooding.check().waitPercentile(100));
    }

    private String verdict() {
        return switch (exitCode()) {
            case PASSED -> "PASS: the limit held. At no moment did more calls run than permits allow, across "
                    + instances + " instances; every call got a permit or a 429 saying why.";
            case LIMIT_EXCEEDED -> "FAIL: the limit was exceeded: " + checks().stream().filter(check -> !check.held())
                    .map(check -> check.semaphore() + " had " + check.maxInside() + " inside for " + check.permits()
                            + " permits")
                    .collect(Collectors.joining("; "));
            default -> "FAIL: " + failedCalls() + " calls got neither a permit nor a 429, e.g. "
                    + calls().stream().flatMap(check -> check.calls().stream())
                            .filter(call -> call.outcome() == Outcome.FAILED).findFirst()
                            .map(Call::detail).orElse("?");
        };
    }
}
