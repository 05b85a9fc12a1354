package io.github.redissemaphore.core.internal.redis;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code release.lua}: gives permits of lease {@code id} back and hands them to the queue. Made by
 * one of its three factories, one per way a lease is given back.
 *
 * @param limit    the caller's configured permits: ARGV 1 (see {@code SemaphoreKeys.argv})
 * @param id       the lease
 * @param keep     permits the lease keeps (0: all go back)
 * @param inbox    the channel of the JVM that releases (null: by force, whoever owns it)
 * @param handOver whether the owner, if another JVM, is told of a hand-over on its inbox
 */
public record ReleaseScript(int limit, String id, int keep, @Nullable String inbox, boolean handOver)
        implements ScriptCall<ReleaseScript.Released> {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SCRIPT = Scripts.load("release");

    /** Ends lease {@code id}, whichever JVM holds it: its holder finds it lost at its next renewal. */
    public static ReleaseScript byForce(int limit, String id) {
        return new ReleaseScript(limit, id, 0, null, false);
    }

    /**
     * Gives permits of lease {@code id} back so it keeps at most {@code keep} (0: none), if the JVM
     * of {@code inbox} owns it.
     */
    public static ReleaseScript own(int limit, String id, int keep, String inbox) {
        return new ReleaseScript(limit, id, keep, inbox, false);
    }

    /**
     * Gives lease {@code id} back, whichever JVM owns it; that JVM, if it is not the one of
     * {@code inbox}, is told on its inbox, as after an adoption: it hears of a hand-over, not of a
     * lost lease. One call, so nothing is left half done if it fails.
     */
    public static ReleaseScript handingOver(int limit, String id, String inbox) {
        return new ReleaseScript(limit, id, 0, inbox, true);
    }

    /**
     * What {@code release} did.
     *
     * @param released       false when the id held nothing, or when {@code ownedElsewhere}
     * @param ownedElsewhere another JVM adopted the lease and the release named this JVM's inbox
     * @param left           what the lease still holds (0 when it is gone)
     */
    public record Released(Usage usage, boolean released, boolean ownedElsewhere, int left) {
    }

    @Override
    @SuppressWarnings("rawtypes")
    public RedisScript<List> script() {
        return SCRIPT;
    }

    @Override
    public List<String> args() {
        List<String> args = new ArrayList<>(List.of(String.valueOf(limit), id));
        if (inbox != null) {
            args.add(String.valueOf(keep));
            args.add(inbox);
            if (handOver) {
                args.add("1");
            }
        }
        return args;
    }

    @Override
    public Released parse(Reply reply) {
        long status = reply.number(0);
        return new Released(reply.usage(limit), status == 1, status == -1, (int) reply.number(1));
    }
}
