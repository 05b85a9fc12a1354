package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;

import java.io.IOException;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/** A single Redis server as a {@link RedisTarget}. */
record StandaloneTarget(RedisServer server) implements RedisTarget {

    @Override
    public String keyPrefix() {
        return server.keyPrefix();
    }

    @Override
    public RedisConnectionFactory newConnectionFactory() {
        return server.connectionFactory();
    }

    @Override
    public List<String> keys(String pattern) {
        return server.keys(pattern);
    }

    @Override
    public long pttl(String key) {
        return server.pttl(key);
    }

    @Override
    public java.util.Map<String, Long> commandCalls() {
        return server.commandCalls();
    }

    @Override
    public List<CommandMonitor> monitors() throws IOException {
        return List.of(new CommandMonitor(server.host(), server.port()));
    }

    @Override
    public long killPubSubClients() {
        return server.killPubSubClients();
    }
}
