package io.github.redissemaphore.core.internal.redis;

import static io.github.redissemaphore.core.internal.redis.ScriptCall.millis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code renew.lua}: extends the leases (each by its own length) and refreshes the waiters that
 * the JVM of {@code inbox} has on one semaphore, in one call; reports, per id, what it found.
 *
 * @param limit     the caller's configured permits
 * @param heartbeat how long a queue entry lives from now without another renewal
 * @param inbox     the channel of the renewing JVM: only its own leases are extended
 * @param ids       leases and waiters, in the order of the reply's statuses
 */
public record RenewScript(int limit, Duration heartbeat, String inbox, List<String> ids)
        implements ScriptCall<RenewScript.Renewed> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("renew");

    public RenewScript {
        ids = List.copyOf(ids);
    }

    /**
     * What {@code renew} found.
     *
     * @param renewed  how many leases it extended
     * @param statuses per id: a token (holds), {@link #WAITING}, {@link #GONE} or {@link #ADOPTED}
     * @param leases   per id, the lease it was extended by ({@link Duration#ZERO} unless it holds)
     */
    public record Renewed(Usage usage, int renewed, List<Long> statuses, List<Duration> leases) {
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
        List<String> args = new ArrayList<>(ids.size() + 3);
        args.add(String.valueOf(limit));
        args.add(millis(heartbeat));
        args.add(inbox);
        args.addAll(ids);
        return args;
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
        return new Renewed(reply.usage(limit), (int) reply.number(0), statuses, leases);
    }
}
