package io.github.redissemaphore.core.internal.redis;

import static io.github.redissemaphore.core.internal.redis.ScriptCall.millis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code renew.lua}: extends the leases (each by its own length) and refreshes the waiters that
 * the JVM of {@code inbox} has on one semaphore, in one call; reports, per id, what it found.
 * With a {@code watermark} it also sweeps: it ends this JVM's leases that the call names neither
 * in {@code ids} nor in {@code spared} and whose fencing token is below the watermark (see the
 * script's header, S1 and S2).
 *
 * @param limit     the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param heartbeat how long a queue entry lives from now without another renewal
 * @param inbox     the channel of the renewing JVM: only its own leases are extended
 * @param ids       leases and waiters, in the order of the reply's statuses
 * @param spared    further ids the sweep must not end (nothing is reported of them)
 * @param watermark server time in microseconds below whose tokens the sweep ends this JVM's
 *                  unnamed leases; 0: no sweep
 */
public record RenewScript(int limit, Duration heartbeat, String inbox, List<String> ids, List<String> spared,
                          long watermark) implements ScriptCall<RenewScript.Renewed> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("renew");

    public RenewScript {
        ids = List.copyOf(ids);
        spared = List.copyOf(spared);
        if (watermark < 0) {
            throw new IllegalArgumentException("watermark must be 0 or more, but was " + watermark);
        }
    }

    /** A renewal without a sweep. */
    public RenewScript(int limit, Duration heartbeat, String inbox, List<String> ids) {
        this(limit, heartbeat, inbox, ids, List.of(), 0);
    }

    /**
     * What {@code renew} found.
     *
     * @param renewed  how many leases it extended
     * @param statuses per id: a token (holds), {@link #WAITING}, {@link #GONE} or {@link #ADOPTED}
     * @param leases   per id, the lease it was extended by ({@link Duration#ZERO} unless it holds)
     * @param swept    how many leases of this JVM the sweep ended (0 without a watermark)
     */
    public record Renewed(Usage usage, int renewed, List<Long> statuses, List<Duration> leases, int swept) {
        /** Still in the queue. */
        public static final long WAITING = 0;
        /** Neither held nor waiting any more. */
        public static final long GONE = -1;
        /** Held, but another JVM adopted it: not extended. */
        public static final long ADOPTED = -2;
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        List<String> args = new ArrayList<>(ids.size() + spared.size() + 3);
        args.add(String.valueOf(limit));
        args.add(watermark > 0 || !spared.isEmpty()
                ? millis(heartbeat) + " " + watermark + " " + spared.size() : millis(heartbeat));
        args.add(inbox);
        args.addAll(ids);
        args.addAll(spared);
        return args;
    }

    /** @return of a renewal of one id (the confirmation of a claim), that lease while it holds */
    @Override
    public @Nullable Held held(Renewed reply) {
        return ids.size() == 1 && reply.statuses().get(0) > 0 ? new Held(ids.get(0), reply.leases().get(0)) : null;
    }

    @Override
    public Renewed parse(Reply reply) {
        int n = ids.size();
        List<Long> statuses = new ArrayList<>(n);
        List<Duration> leases = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            statuses.add(reply.number(1 + i));
            leases.add(Duration.ofMillis(reply.number(1 + n + i)));
        }
        return new Renewed(reply.usage(limit), (int) reply.number(0), statuses, leases, (int) reply.number(1 + 2 * n));
    }
}
