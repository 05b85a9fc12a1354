package io.github.redissemaphore.core.internal.redis;

import static io.github.redissemaphore.core.internal.redis.ScriptCall.flag;
import static io.github.redissemaphore.core.internal.redis.ScriptCall.millis;

import java.time.Duration;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code lease.lua}: re-leases a holder: adopts it into the JVM of {@code inbox}, or extends it by
 * a new lease length. Made by {@link #adopt} or {@link #extend}.
 *
 * @param limit    the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param id       the lease
 * @param lease    the new lease length (zero when adopting: it keeps its own)
 * @param inbox    the channel of the JVM that adopts or extends
 * @param takeOver adopt, whoever owns it (else extend only a lease that JVM owns)
 * @param owner    host/pid/thread, recorded when adopting
 */
public record LeaseScript(int limit, String id, Duration lease, String inbox, boolean takeOver, String owner)
        implements ScriptCall<LeaseScript.Leased> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("lease");

    /**
     * The JVM of {@code inbox} takes over lease {@code id}, whoever owned it, keeping its lease
     * length; {@code owner} is recorded with it.
     */
    public static LeaseScript adopt(int limit, String id, String inbox, String owner) {
        return new LeaseScript(limit, id, Duration.ZERO, inbox, true, owner);
    }

    /** Lease {@code id}, if the JVM of {@code inbox} owns it, ends {@code lease} from now and is renewed by it. */
    public static LeaseScript extend(int limit, String id, Duration lease, String inbox) {
        return new LeaseScript(limit, id, lease, inbox, false, "");
    }

    /**
     * What {@code lease} did; when {@code status} is {@link Status#HELD}, the lease now ends
     * {@code lease} from the reply's server time, and {@code count} and {@code token} are the holder's.
     */
    public record Leased(Usage usage, Status status, int count, long token, Duration lease) {
        /** Whether the id holds, holds nothing, or is owned by another JVM (extend only). */
        public enum Status { OWNED_ELSEWHERE, GONE, HELD }
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        return List.of(String.valueOf(limit), id, millis(lease), inbox, flag(takeOver), owner);
    }

    @Override
    public Leased parse(Reply reply) {
        return new Leased(reply.usage(limit), Leased.Status.values()[(int) reply.number(0) + 1], (int) reply.number(1),
                reply.number(2), Duration.ofMillis(reply.number(3)));
    }
}
