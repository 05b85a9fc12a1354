package io.github.redissemaphore.core.internal.redis;

import static io.github.redissemaphore.core.internal.redis.ScriptCall.millis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code acquire.lua}: grants {@code count} permits to lease {@code id} now, or queues it when the
 * caller will wait, or refuses.
 *
 * @param limit     the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param id        the lease (and waiter) id
 * @param count     permits asked for
 * @param lease     the lease a grant gets
 * @param queue     whether the caller waits (queue it when it does not fit now)
 * @param fair      whether a caller may take free permits while others wait (false) or not
 * @param heartbeat how long the queue entry lives without a renewal from this JVM
 * @param inbox     the channel this JVM hears of its grants on
 * @param owner     host/pid/thread, recorded for introspection
 * @param maxWaiters the queue's bound (0: none): a new waiter beyond it is refused, {@link Acquired.Status#FULL}
 * @param longestPredictedWait a caller whose predicted wait is longer is refused rather than
 *                  queued, {@link Acquired.Status#TOO_LONG} (zero: none)
 * @param overLimit whether it grants whatever the limit (mode 4, never queued): a permit this
 *                  instance granted on its own while Redis could not be reached, written back
 *                  as a holder on recovery
 */
public record AcquireScript(int limit, String id, int count, Duration lease, boolean queue, boolean fair,
                            Duration heartbeat, String inbox, String owner, int maxWaiters,
                            Duration longestPredictedWait, boolean overLimit)
        implements ScriptCall<AcquireScript.Acquired> {

    /** A call that grants only under the limit. */
    public AcquireScript(int limit, String id, int count, Duration lease, boolean queue, boolean fair,
                         Duration heartbeat, String inbox, String owner, int maxWaiters,
                         Duration longestPredictedWait) {
        this(limit, id, count, lease, queue, fair, heartbeat, inbox, owner, maxWaiters, longestPredictedWait, false);
    }

    /** A call with no bound on the queue. */
    public AcquireScript(int limit, String id, int count, Duration lease, boolean queue, boolean fair,
                         Duration heartbeat, String inbox, String owner) {
        this(limit, id, count, lease, queue, fair, heartbeat, inbox, owner, 0, Duration.ZERO);
    }

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("acquire");

    /**
     * What {@code acquire} did.
     *
     * @param token the fencing token of a grant (0 otherwise)
     * @param predictedWaitMillis for a caller that queued or was refused at the queue: the wait
     *              predicted at the back of the queue, ms; -1 when none is known (no hold measured
     *              yet, or a reply that carries none)
     * @param rateHeld for a caller that joined the queue: whether the rate's window, not the
     *              permits, held it back (the permits let it in, or the head it queued behind, but
     *              the window had no slot free): a grant the rate delays
     */
    public record Acquired(Usage usage, Status status, long token, long predictedWaitMillis, boolean rateHeld) {

        /** A reply that says nothing of the rate. */
        public Acquired(Usage usage, Status status, long token, long predictedWaitMillis) {
            this(usage, status, token, predictedWaitMillis, false);
        }

        /** A reply with no prediction. */
        public Acquired(Usage usage, Status status, long token) {
            this(usage, status, token, -1);
        }

        /** What the call got, in the order of acquire.lua's statuses. */
        public enum Status {
            /** no permit free now, and it did not queue (no wait, or more than the limit asked) */
            REFUSED,
            GRANTED,
            QUEUED,
            /** refused: the queue was full (Q1) */
            FULL,
            /** refused: its predicted wait was longer than it allowed (Q2) */
            TOO_LONG,
            /** refused: it did not wait, and the rate's window had no slot (R1); predicted: until one frees */
            RATE_LIMITED
        }
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        // Packed as acquire.lua reads them: the record's texts travel as they are stored.
        List<String> args = List.of(String.valueOf(limit), id, count + " " + millis(lease) + " " + millis(heartbeat),
                inbox + " " + owner, overLimit ? "4" : String.valueOf((queue ? 1 : 0) + (fair ? 2 : 0)));
        if (maxWaiters == 0 && longestPredictedWait.isZero()) {
            return args;
        }
        List<String> bounded = new ArrayList<>(args);
        bounded.add(maxWaiters + " " + millis(longestPredictedWait));
        return bounded;
    }

    /** @return the lease of a grant */
    @Override
    public @Nullable Held held(Acquired reply) {
        return reply.status() == Acquired.Status.GRANTED ? new Held(id, lease) : null;
    }

    @Override
    public Acquired parse(Reply reply) {
        return new Acquired(reply.usage(limit), Acquired.Status.values()[(int) reply.number(0)], reply.number(1),
                reply.size() > 2 ? reply.number(2) : -1, reply.size() > 3 && reply.number(3) == 1);
    }
}
