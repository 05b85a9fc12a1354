package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.internal.redis.Refusal.Kind;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;

import java.util.concurrent.CompletionException;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * The refusals of Redis 6.2, 7.0, 7.2+ and Valkey, each worded as that server words it (7.0's and
 * the unknown commands' as the {@code redis-server} of these tests answers; the others as their
 * sources write them): what was refused, and the command, key or channel when the reply or the
 * script's line names it. Anything else is no refusal.
 */
class RefusalTest {

    /** Line 3 runs PERSIST, line 5 PUBLISH. */
    private static final String SCRIPT = "local a = 1\n-- a comment\nredis.call('PERSIST', KEYS[2])\n"
            + "local b = 2\nredis.call(\"PUBLISH\", ARGV[1], 'x')\n";

    /** Each reply as a server words it, what was refused, and the command it (or the script's line) names. */
    static Stream<Arguments> replies() {
        return Stream.of(
                arguments("NOPERM this user has no permissions to run the 'wait' command", Kind.COMMAND, "wait"),
                arguments("NOPERM User app has no permissions to run the 'wait' command", Kind.COMMAND, "wait"),
                arguments("NOPERM this user has no permissions to run the 'cluster|nodes'"
                        + " command", Kind.COMMAND, "cluster|nodes"),
                arguments("NOPERM this user has no permissions to access one of the keys used as"
                        + " arguments", Kind.KEY, null),
                arguments("NOPERM No permissions to access a key", Kind.KEY, null),
                arguments("NOPERM this user has no permissions to access one of the channels"
                        + " used as arguments", Kind.CHANNEL, null),
                arguments("NOPERM No permissions to access a channel", Kind.CHANNEL, null),
                arguments("ERR The user executing the script can't run this command or"
                        + " subcommand script: 0af, on @user_script:3.", Kind.COMMAND, "persist"),
                arguments("ERR The user executing the script can't access at least one of the keys mentioned"
                        + " in the command arguments script: d2, on @user_script:3.", Kind.KEY, "persist"),
                arguments("ERR The user executing the script can't publish to the channel"
                        + " mentioned in the command script: 53, on @user_script:5.", Kind.CHANNEL, "publish"),
                arguments("ERR ACL failure in script: User app has no permissions to run the"
                        + " 'persist' command script: 0af, on @user_script:3.", Kind.COMMAND, "persist"),
                arguments("ERR ACL failure in script: No permissions to access a key script: d2,"
                        + " on @user_script:3.", Kind.KEY, "persist"),
                arguments("ERR ACL failure in script: No permissions to access a channel script:"
                        + " 53, on @user_script:5.", Kind.CHANNEL, "publish"),
                arguments("ERR unknown command 'WAIT', with args beginning with: '0'"
                        + " '0'", Kind.UNKNOWN_COMMAND, "wait"),
                arguments("ERR unknown command `WAIT`, with args beginning with: `0`,"
                        + " `0`,", Kind.UNKNOWN_COMMAND, "wait"),
                arguments("ERR unknown subcommand 'setinfo'. Try CLIENT HELP.", Kind.UNKNOWN_COMMAND, "setinfo"),
                arguments("ERR Unknown Redis command called from script script: b8, on"
                        + " @user_script:5.", Kind.UNKNOWN_COMMAND, "publish"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("replies")
    void readsWhatWasRefusedAndWhichCommand(String reply, Kind kind, String command) {
        Refusal refusal = Refusal.parse(reply, SCRIPT);
        assertThat(refusal).isNotNull();
        assertThat(refusal.kind()).isEqualTo(kind);
        assertThat(refusal.command()).isEqualTo(command);
        assertThat(refusal.reply()).isEqualTo(reply);
    }

    @Test
    void readsTheKeyOrChannelWhereTheReplyNamesIt() {
        Refusal key = Refusal.parse("ERR ACL failure in script: User app has no permissions to access the"
                + " 'semaphore:{a}:state' key script: d2, on @user_script:3.", SCRIPT);
        assertThat(key).extracting(Refusal::kind, Refusal::object).containsExactly(Kind.KEY, "semaphore:{a}:state");
        assertThat(key.what()).isEqualTo("the key semaphore:{a}:state (PERSIST)");

        Refusal channel = Refusal.parse("NOPERM No permissions to access the 'semaphore:inbox:x' channel", null);
        assertThat(channel).extracting(Refusal::kind, Refusal::object)
                .containsExactly(Kind.CHANNEL, "semaphore:inbox:x");
        assertThat(channel.what()).isEqualTo("the channel semaphore:inbox:x");
    }

    @Test
    void aScriptLineOutOfRangeOrWithoutACallNamesNoCommand() {
        assertThat(Refusal.parse("ERR The user executing the script can't run this command or subcommand script: 0,"
                + " on @user_script:99.", SCRIPT).command()).isNull();
        assertThat(Refusal.parse("ERR The user executing the script can't run this command or subcommand script: 0,"
                + " on @user_script:2.", SCRIPT).command()).isNull();
        assertThat(Refusal.parse("NOPERM this user has no permissions to access one of the keys used as arguments",
                null).what()).isEqualTo("a key");
    }

    @Test
    void otherErrorsAreNoRefusal() {
        assertThat(Refusal.parse("WRONGTYPE Operation against a key holding the wrong kind of value", null)).isNull();
        assertThat(Refusal.parse("ERR Error running script: @user_script:12: user_script:12: attempt to compare nil",
                SCRIPT)).isNull();
        assertThat(Refusal.parse("LOADING Redis is loading the dataset in memory", null)).isNull();
        assertThat(Refusal.of(new RedisException("Connection closed"), null)).isNull();
    }

    @Test
    void findsTheReplyInTheCausesAndInSuppressedFailures() {
        RedisCommandExecutionException reply = new RedisCommandExecutionException(
                "NOPERM this user has no permissions to run the 'cluster|nodes' command");
        assertThat(Refusal.of(new CompletionException(new IllegalStateException("wrapped", reply)), null))
                .extracting(Refusal::command).isEqualTo("cluster|nodes");

        RedisException topology =
                new RedisException("Cannot retrieve cluster partitions from [redis://127.0.0.1:7000]");
        topology.addSuppressed(new RedisException("node 1", reply));
        Refusal refusal = Refusal.of(topology, null);
        assertThat(refusal).isNotNull();
        assertThat(refusal.commandName()).isEqualTo("CLUSTER NODES");
    }
}
