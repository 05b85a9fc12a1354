package io.github.redissemaphore.core.redis;

import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the semaphore scripts: the one place that knows their arguments and replies. Every method
 * is exactly one Redis call (EVALSHA), and any Redis failure surfaces as
 * {@link SemaphoreUnavailableException}.
 */
public final class SemaphoreCommands {

    /** Index of a script's own first entry: after used, limit, waiters, server time and earliest lease end. */
    private static final int OWN = 5;

    private final StringRedisTemplate redis;
    private final SemaphoreScripts scripts;

    public SemaphoreCommands(RedisConnectionFactory connectionFactory, SemaphoreScripts scripts) {
        this.redis = new StringRedisTemplate(connectionFactory);
        this.scripts = scripts;
    }

    /**
     * Usage figures every script returns: the values for gauges, free of charge.
     * {@code serverMicros} (Redis server time) tells which of two figures is newer;
     * {@code earliestLeaseEndMillis} is how long until the earliest lease ends, at most (-1: no
     * lease), so a JVM with waiters can call again the moment an expired lease frees a permit.
     */
    public record Usage(int used, int limit, int waiters, long serverMicros, long earliestLeaseEndMillis) {
        /** @return permits free now */
        public int available() {
            return Math.max(limit - used, 0);
        }
    }

    /** What {@code acquire} did. */
    public record Acquired(Usage usage, Status status, long token) {
        /** Granted, queued or refused. */
        public enum Status { REFUSED, GRANTED, QUEUED }
    }

    /** What {@code release} did; {@code released} is false when the id held nothing. */
    public record Released(Usage usage, boolean released) {
    }

    /** What {@code renew} found: per id, a token (holds), {@link #WAITING} or {@link #GONE}. */
    public record Renewed(Usage usage, int renewed, List<Long> statuses) {
        /** Still in the queue. */
        public static final long WAITING = 0;
        /** Neither held nor waiting any more. */
        public static final long GONE = -1;
    }

    /** What {@code cancel} did: {@code grantedToken} is 0 when the waiter left the queue. */
    public record Cancelled(Usage usage, long grantedToken) {
    }

    /** Grants, queues or refuses {@code count} permits for the lease {@code id}. */
    public Acquired acquire(SemaphoreKeys keys, int limit, String id, int count, Duration lease, boolean wait,
                            boolean fair, Duration heartbeat, String inbox, String owner) {
        List<Object> reply = run(keys, scripts.acquire(), String.valueOf(limit), id, String.valueOf(count),
                millis(lease), flag(wait), flag(fair), millis(heartbeat), inbox, owner);
        return new Acquired(usage(reply), Acquired.Status.values()[(int) number(reply, OWN)], number(reply, OWN + 1));
    }

    /** Gives the lease {@code id} back. */
    public Released release(SemaphoreKeys keys, int limit, String id) {
        List<Object> reply = run(keys, scripts.release(), String.valueOf(limit), id);
        return new Released(usage(reply), number(reply, OWN) == 1);
    }

    /** Extends these leases and refreshes these waiters, all of one semaphore, in one call. */
    public Renewed renew(SemaphoreKeys keys, int limit, Duration heartbeat, List<String> ids) {
        List<String> args = new ArrayList<>(ids.size() + 2);
        args.add(String.valueOf(limit));
        args.add(millis(heartbeat));
        args.addAll(ids);
        List<Object> reply = run(keys, scripts.renew(), args.toArray());
        List<Long> statuses = new ArrayList<>(ids.size());
        for (int i = OWN + 1; i < reply.size(); i++) {
            statuses.add(number(reply, i));
        }
        return new Renewed(usage(reply), (int) number(reply, OWN), statuses);
    }

    /** Takes waiter {@code id} out of the queue; with {@code release}, gives back a grant it got meanwhile. */
    public Cancelled cancel(SemaphoreKeys keys, int limit, String id, boolean release) {
        List<Object> reply = run(keys, scripts.cancel(), String.valueOf(limit), id, flag(release));
        return new Cancelled(usage(reply), number(reply, OWN));
    }

    /** What {@code state} read, with the usage figures every reply carries. */
    public record State(Usage usage, SemaphoreState state) {
    }

    /** Reads the semaphore, listing at most {@code most} holders and waiters. */
    public State state(SemaphoreKeys keys, int limit, int most) {
        List<Object> reply = run(keys, scripts.state(), String.valueOf(limit), String.valueOf(most));
        Usage usage = usage(reply);
        List<SemaphoreState.Holder> holders = new ArrayList<>();
        for (Object entry : (List<?>) reply.get(OWN)) {
            List<?> h = (List<?>) entry;
            holders.add(new SemaphoreState.Holder((String) h.get(0), ((Number) h.get(1)).intValue(),
                    ((Number) h.get(2)).longValue(), (String) h.get(3),
                    Duration.ofMillis(Math.max(((Number) h.get(4)).longValue(), 0))));
        }
        List<SemaphoreState.Waiter> waiters = new ArrayList<>();
        for (Object entry : (List<?>) reply.get(OWN + 1)) {
            List<?> w = (List<?>) entry;
            waiters.add(new SemaphoreState.Waiter((String) w.get(0), ((Number) w.get(1)).intValue(),
                    (String) w.get(2)));
        }
        return new State(usage, new SemaphoreState(keys.name(), usage.limit(), usage.used(), usage.available(),
                holders, waiters));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private List<Object> run(SemaphoreKeys keys, RedisScript<List> script, Object... args) {
        return call(keys.name(), () -> (List<Object>) redis.execute(script, keys.all(), args));
    }

    private static <T> T call(String name, Supplier<T> command) {
        try {
            T reply = command.get();
            if (reply == null) {
                throw new SemaphoreUnavailableException("Redis gave no reply for semaphore '" + name + "'");
            }
            return reply;
        } catch (SemaphoreException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new SemaphoreUnavailableException(
                    "Redis unavailable for semaphore '" + name + "': " + e.getMessage(), e);
        }
    }

    private static Usage usage(List<Object> reply) {
        return new Usage((int) number(reply, 0), (int) number(reply, 1), (int) number(reply, 2), number(reply, 3),
                number(reply, 4));
    }

    private static long number(List<Object> reply, int index) {
        return ((Number) reply.get(index)).longValue();
    }

    private static String millis(Duration duration) {
        return String.valueOf(duration.toMillis());
    }

    private static String flag(boolean value) {
        return value ? "1" : "0";
    }
}
