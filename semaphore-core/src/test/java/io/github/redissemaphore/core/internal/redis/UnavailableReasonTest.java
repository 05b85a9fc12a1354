package io.github.redissemaphore.core.internal.redis;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.test.Dedicated;
import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;

import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;

import org.junit.jupiter.api.Test;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Each place the core builds a {@link SemaphoreUnavailableException} gives it the reason it knows
 * there ({@link SemaphoreUnavailableException#getReason()}), which the 503 problem detail shows as
 * its cause without reading the message: the builders of {@link CallFailures} and
 * {@link RefusedCalls} one by one, and a closed registry, a grant no replica acknowledged and a
 * stopped server end to end.
 */
@RedisTest
class UnavailableReasonTest {

    private static final SemaphoreKeys KEYS = SemaphoreKeys.of("semaphore", "reports");

    @Test
    void aClosedRegistryIsShuttingDown() {
        assertThat(CallFailures.closed().getReason()).isEqualTo(Reason.SHUTTING_DOWN);
    }

    @Test
    void aFailureForWantOfRedisSaysWhatItLacked() {
        assertThat(reasonOf(CallFailures.unavailable("reports", new RedisCommandTimeoutException("no reply"))))
                .isEqualTo(Reason.NO_ANSWER);
        assertThat(reasonOf(CallFailures.unavailable("reports",
                CallFailures.noReply(Duration.ofSeconds(2), null)))).isEqualTo(Reason.NO_ANSWER);
        assertThat(reasonOf(CallFailures.unavailable("reports", new QueryTimeoutException("Redis command timed out"))))
                .isEqualTo(Reason.NO_ANSWER);
        assertThat(reasonOf(CallFailures.unavailable("reports",
                new RedisConnectionException("Unable to connect", new ConnectException("refused")))))
                .isEqualTo(Reason.UNREACHABLE);
        assertThat(reasonOf(CallFailures.unavailable("reports",
                new RedisConnectionFailureException("Unable to connect to Redis")))).isEqualTo(Reason.UNREACHABLE);
        assertThat(reasonOf(CallFailures.unavailable("reports",
                new RedisCommandExecutionException("ERR something else")))).isEqualTo(Reason.UNAVAILABLE);
        // the library's own passes through with its reason
        SemaphoreUnavailableException closed = CallFailures.closed();
        assertThat(CallFailures.unavailable("reports", closed)).isSameAs(closed);
        // ScriptRunner's words for a failure that is not the library's
        assertThat(reasonOf(ScriptRunner.failure(new CompletionException(new RedisCommandTimeoutException("late")))))
                .isEqualTo(Reason.NO_ANSWER);
    }

    @Test
    void aRefusedCallIsRefused() {
        Throwable refused = RefusedCalls.explained(new RedisCommandExecutionException(
                "NOPERM this user has no permissions to run the 'zadd' command"), KEYS, "the acquire script", null);
        assertThat(refused).isInstanceOf(SemaphoreUnavailableException.class);
        assertThat(reasonOf(refused)).isEqualTo(Reason.REFUSED);
        Throwable unknown = RefusedCalls.explained(new RedisCommandExecutionException(
                "ERR unknown command 'EVALSHA', with args beginning with: "), KEYS, "the acquire script", null);
        assertThat(reasonOf(unknown)).isEqualTo(Reason.REFUSED);
        // not a refusal: passes through, to be worded by CallFailures
        RedisCommandTimeoutException timeout = new RedisCommandTimeoutException("no reply");
        assertThat(RefusedCalls.explained(timeout, KEYS, "the acquire script", null)).isSameAs(timeout);
    }

    @Test
    void theConstructorsWithoutAReasonReadItOffTheCause() {
        assertThat(new SemaphoreUnavailableException("gone").getReason()).isEqualTo(Reason.UNAVAILABLE);
        // words are not read: the message is for a person
        assertThat(new SemaphoreUnavailableException("The semaphore registry is closed").getReason())
                .isEqualTo(Reason.UNAVAILABLE);
        // a connection refused by the network is no refusal of the server's
        assertThat(new SemaphoreUnavailableException("Connection refused",
                new RedisConnectionException("Connection refused")).getReason()).isEqualTo(Reason.UNREACHABLE);
        assertThat(new SemaphoreUnavailableException("late", new RedisCommandTimeoutException("x")).getReason())
                .isEqualTo(Reason.NO_ANSWER);
        assertThat(new SemaphoreUnavailableException("reports", "no thread", new RejectedExecutionException("x"))
                .getReason()).isEqualTo(Reason.UNAVAILABLE);
        assertThat(new SemaphoreUnavailableException("wrapped", CallFailures.closed()).getReason())
                .isEqualTo(Reason.SHUTTING_DOWN);
    }

    @Test
    void aCallOnAClosedRegistryIsShuttingDown(RedisServer server) {
        SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix()).build();
        RedisSemaphore semaphore = registry.semaphore("closed");
        registry.close();
        assertThat(reasonOf(catchThrowable(semaphore::tryAcquire))).isEqualTo(Reason.SHUTTING_DOWN);
    }

    @Test
    void aGrantNoReplicaAcknowledgedIsNotReplicated(RedisServer server) {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory())
                .keyPrefix(server.keyPrefix()).build()) {
            // the server has no replica: WAIT 1 counts none within the timeout
            RedisSemaphore semaphore = registry.semaphore("unreplicated",
                    SemaphoreSettings.DEFAULTS.withReplicas(1, Duration.ofMillis(100)));
            assertThat(reasonOf(catchThrowable(semaphore::tryAcquire))).isEqualTo(Reason.NOT_REPLICATED);
        }
    }

    @Test
    void aCallWhileRedisIsDownSaysNoAnswerOrUnreachable(@Dedicated RedisServer server) {
        try (SemaphoreRegistry registry = SemaphoreRegistry.builder(server.connectionFactory(Duration.ofSeconds(1)))
                .build()) {
            RedisSemaphore semaphore = registry.semaphore("down");
            semaphore.tryAcquire().orElseThrow().release();
            server.stop();
            assertThat(reasonOf(catchThrowable(semaphore::tryAcquire))).isIn(Reason.NO_ANSWER, Reason.UNREACHABLE);
            server.start();
        }
    }

    private static Reason reasonOf(Throwable failure) {
        assertThat(failure).isInstanceOf(SemaphoreUnavailableException.class);
        return ((SemaphoreUnavailableException) failure).getReason();
    }
}
