package io.github.redissemaphore.sample.demo;

/**
 * The exports of one tenant in a demo run: its own limit check, and its queue as Redis showed it.
 *
 * @param check      the tenant's calls against its permits ({@code exports:<tenant>})
 * @param mostQueued the most of its callers seen queued at once
 * @param flooding   whether it is the tenant that floods
 */
public record TenantExports(LimitCheck check, int mostQueued, boolean flooding) {

    /** @return the tenant, from its semaphore's name */
    public String tenant() {
        return check.semaphore().substring(check.semaphore().indexOf(':') + 1);
    }

    /** @return its line under the table */
    String line() {
        return String.format("  %-8s %3d at once, up to %2d queued: %2d served, %2d rejected, wait p50 %5d ms,"
                        + " p99 %5d ms%s%n", tenant(), check.total(), mostQueued, check.count(Outcome.SERVED),
                check.count(Outcome.REJECTED), check.waitPercentile(50), check.waitPercentile(99),
                flooding ? "  (flooding)" : "");
    }
}
