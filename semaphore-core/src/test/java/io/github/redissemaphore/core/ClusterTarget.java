package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisServer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/** A 3-master Redis Cluster as a {@link RedisTarget}. */
record ClusterTarget(RedisCluster cluster) implements RedisTarget {

    @Override
    public String keyPrefix() {
        return cluster.keyPrefix();
    }

    @Override
    public RedisConnectionFactory newConnectionFactory() {
        return cluster.connectionFactory();
    }

    @Override
    public List<String> keys(String pattern) {
        return cluster.keys(pattern);
    }

    @Override
    public long pttl(String key) {
        return cluster.pttl(key);
    }

    @Override
    public java.util.Map<String, Long> commandCalls() {
        return cluster.commandCalls();
    }

    @Override
    public List<CommandMonitor> monitors() throws IOException {
        List<CommandMonitor> monitors = new ArrayList<>();
        for (RedisServer node : cluster.nodes()) {
            monitors.add(new CommandMonitor(node.host(), node.port()));
        }
        return monitors;
    }

    @Override
    public long killPubSubClients() {
        return cluster.killPubSubClients();
    }
}
