package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.SemaphoreState;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code state.lua}: reads a semaphore for introspection, listing at most {@code most} holders and
 * waiters.
 *
 * @param name     the semaphore, as the state names it
 * @param baseName the base name of a capped semaphore's key (its cap's name), else the name
 * @param limit    the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param most     how many holders and waiters to list at most
 */
public record StateScript(String name, String baseName, int limit, int most)
        implements ScriptCall<StateScript.Read> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("state");

    /** What {@code state} read, with the usage figures every reply carries. */
    public record Read(Usage usage, SemaphoreState state) {

        /**
         * @return the state of a cap as a whole (read on its keys without a key): its own figures
         *         are the cap's, and its entries name their keys
         */
        public SemaphoreState asCap(int totalPermits) {
            Usage.Total total = Objects.requireNonNull(usage.total(), "a capped semaphore's reply");
            return new SemaphoreState(state.name(), total.limit(), total.used(), total.available(), state.holders(),
                    state.waiters(), totalPermits, total.override() > 0 ? SemaphoreState.OVERRIDE
                    : SemaphoreState.CONFIGURED);
        }
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        return List.of(String.valueOf(limit), String.valueOf(most));
    }

    /** @return the rate's window (state.lua's fourth entry), or null for a semaphore without a rate */
    private static SemaphoreState.@Nullable RateWindow window(Reply reply) {
        if (reply.size() < 4) {
            return null;
        }
        List<?> window = reply.list(3);
        return new SemaphoreState.RateWindow((int) Reply.number(window.get(0)),
                Duration.ofMillis(Reply.number(window.get(1))), (int) Reply.number(window.get(2)),
                Duration.ofMillis(Reply.number(window.get(3))), Reply.number(window.get(4)) == 1);
    }

    /**
     * Holders as [id, count, token, owner, lease left ms (, key)]; waiters as [id, count, owner (,
     * key)], in queue order (a capped semaphore's entries name their key).
     */
    @Override
    public Read parse(Reply reply) {
        Usage usage = reply.usage(limit);
        List<SemaphoreState.Holder> holders = new ArrayList<>();
        for (Object entry : reply.list(0)) {
            List<?> h = (List<?>) entry;
            holders.add(new SemaphoreState.Holder(Reply.text(h.get(0)), (int) Reply.number(h.get(1)),
                    Reply.number(h.get(2)), Reply.text(h.get(3)),
                    Duration.ofMillis(Math.max(Reply.number(h.get(4)), 0)),
                    h.size() > 5 ? Reply.text(h.get(5)) : null));
        }
        List<SemaphoreState.Waiter> waiters = new ArrayList<>();
        // The average hold predicts each waiter's wait, as acquire.lua does for a caller it
        // queues; not for a cap as a whole, whose keys each have a limit and a queue of their own.
        long holdMillis = reply.size() > 2 ? reply.number(2) : -1;
        boolean wholeCap = name.equals(baseName) && !reply.list(1).isEmpty()
                && ((List<?>) reply.list(1).get(0)).size() > 3;
        Map<String, Integer> places = new HashMap<>();
        for (Object entry : reply.list(1)) {
            List<?> w = (List<?>) entry;
            String key = w.size() > 3 ? Reply.text(w.get(3)) : null;
            int position = places.merge(String.valueOf(key), 1, Integer::sum);
            Duration predicted = holdMillis < 0 || wholeCap ? null
                    : Duration.ofMillis((position * holdMillis + usage.limit() - 1) / usage.limit());
            waiters.add(new SemaphoreState.Waiter(Reply.text(w.get(0)), (int) Reply.number(w.get(1)),
                    Reply.text(w.get(2)), key, position, predicted));
        }
        Usage.Total total = usage.total();
        return new Read(usage, new SemaphoreState(name, usage.limit(), usage.used(), usage.available(), holders,
                waiters, limit, usage.overridden() ? SemaphoreState.OVERRIDE : SemaphoreState.CONFIGURED,
                total == null ? null : new SemaphoreState.Total(baseName, total.limit(), total.used(),
                        total.available(), total.waiters(), total.override() > 0 ? SemaphoreState.OVERRIDE
                        : SemaphoreState.CONFIGURED), window(reply)));
    }
}
