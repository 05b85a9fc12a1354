package io.github.redissemaphore.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Creates the Spring Data Redis connection factories handed out to tests and keeps track of them,
 * so they are destroyed with the server or cluster they point at (or earlier, at the end of the test
 * that created them, see {@link RedisExtension}). Each factory has its own Lettuce client and client
 * resources, as a separate JVM would.
 */
final class ConnectionFactories {

    /** Fixed by the contract of the test support: tests reason about failing within these bounds. */
    static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionFactories.class);

    private final List<LettuceConnectionFactory> created = new ArrayList<>();
    /** How many were ever created: a mark is a position in that sequence. */
    private int sequence;
    private final List<Integer> sequenceNumbers = new ArrayList<>();

    /** @return a new started factory for a standalone server, logging in as {@code username} unless it is null */
    LettuceConnectionFactory standalone(String host, int port, Duration commandTimeout, String username,
                                        String password) {
        ClientOptions options = ClientOptions.builder().socketOptions(socketOptions()).build();
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(host, port);
        if (username != null) {
            server.setUsername(username);
            server.setPassword(password);
        }
        return track(new LettuceConnectionFactory(server, clientConfiguration(options, commandTimeout)));
    }

    /**
     * @return a new started factory for a cluster, given its seed nodes as "host:port", logging in as
     *         {@code username} unless it is null
     */
    LettuceConnectionFactory cluster(List<String> nodes, Duration commandTimeout, String username, String password) {
        ClusterClientOptions options = ClusterClientOptions.builder()
                .socketOptions(socketOptions())
                // MOVED/ASK are followed anyway; refreshing keeps the slot map current after a node
                // restart, so redirects stay the exception. Lettuce 7 enables every adaptive trigger
                // (MOVED, ASK, persistent reconnects...) by default; periodic refresh is added here.
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(Duration.ofSeconds(10))
                        .build())
                .build();
        RedisClusterConfiguration cluster = new RedisClusterConfiguration(nodes);
        if (username != null) {
            cluster.setUsername(username);
            cluster.setPassword(password);
        }
        return track(new LettuceConnectionFactory(cluster, clientConfiguration(options, commandTimeout)));
    }

    /** @return a new started factory that finds the master through Sentinel */
    LettuceConnectionFactory sentinel(RedisSentinelConfiguration configuration, Duration commandTimeout) {
        ClientOptions options = ClientOptions.builder().socketOptions(socketOptions()).build();
        return track(new LettuceConnectionFactory(configuration, clientConfiguration(options, commandTimeout)));
    }

    private static SocketOptions socketOptions() {
        return SocketOptions.builder().connectTimeout(CONNECT_TIMEOUT).build();
    }

    private static LettuceClientConfiguration clientConfiguration(ClientOptions options, Duration commandTimeout) {
        return LettuceClientConfiguration.builder()
                .commandTimeout(commandTimeout)
                .clientOptions(options)
                // Destroying a factory at the end of a test should not add a quiet period to it.
                .shutdownTimeout(Duration.ofMillis(100))
                .shutdownQuietPeriod(Duration.ZERO)
                .build();
    }

    private synchronized LettuceConnectionFactory track(LettuceConnectionFactory factory) {
        factory.afterPropertiesSet();
        factory.start();
        created.add(factory);
        sequenceNumbers.add(sequence++);
        return factory;
    }

    /** @return a mark: {@link #destroySince(int)} destroys the factories created after it */
    synchronized int mark() {
        return sequence;
    }

    /** Destroys the factories created since {@code mark}. */
    void destroySince(int mark) {
        List<LettuceConnectionFactory> doomed = new ArrayList<>();
        synchronized (this) {
            for (int i = created.size() - 1; i >= 0; i--) {
                if (sequenceNumbers.get(i) >= mark) {
                    doomed.add(created.remove(i));
                    sequenceNumbers.remove(i);
                }
            }
        }
        doomed.forEach(ConnectionFactories::destroy);
    }

    /** Destroys every factory still tracked. */
    void destroyAll() {
        destroySince(0);
    }

    private static void destroy(LettuceConnectionFactory factory) {
        try {
            factory.destroy();
        } catch (RuntimeException e) {
            LOG.warn("could not destroy a connection factory of the test support", e);
        }
    }
}
