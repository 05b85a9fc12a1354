package io.github.redissemaphore.core;

import java.io.IOException;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * What a shared test needs from the Redis it runs on, standalone or cluster alike.
 */
interface RedisTarget {

    /** @return the key prefix the tests give their registries: they write no other key */
    String keyPrefix();

    /** @return a new, started connection factory: each one models a separate JVM */
    RedisConnectionFactory newConnectionFactory();

    /** @return keys matching the pattern, on every node */
    List<String> keys(String pattern);

    /** @return PTTL of the key, asked of the node that has it */
    long pttl(String key);

    /** @return INFO commandstats calls per command, summed over the masters */
    java.util.Map<String, Long> commandCalls();

    /** @return one monitor per master, to count what clients send */
    List<CommandMonitor> monitors() throws IOException;

    /** Kills every pub/sub client connection. @return how many */
    long killPubSubClients();
}
