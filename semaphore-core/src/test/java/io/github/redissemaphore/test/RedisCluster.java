package io.github.redissemaphore.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis Cluster of 3 masters (no replicas) made of local {@code redis-server} processes, each on a
 * free port whose cluster bus port (port + 10000) is free too. The processes come from the PATH or
 * the embedded-redis jar like {@link RedisServers#start()}; never from REDIS_URL or Docker, whose
 * announced addresses would not be reachable from here.
 *
 * <p>Node {@code i} owns slot range {@code i} of three equal ranges. Nodes are managed
 * {@link RedisServer}s: they can be stopped and started again (their nodes.conf survives, so they
 * rejoin). Closing destroys the connection factories handed out and stops every node.
 */
public final class RedisCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RedisCluster.class);
    private static final int SLOTS = 16384;
    private static final int MASTERS = 3;
    private static final Duration FORMATION_TIMEOUT = Duration.ofSeconds(30);

    private final List<RedisServer> nodes;
    /** First slot of each node's range, in node order. */
    private final int[] firstSlots = new int[MASTERS];
    private final ConnectionFactories factories = new ConnectionFactories();
    private final String keyPrefix = RedisServer.newKeyPrefix();
    private boolean closed;

    private RedisCluster(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
        for (int i = 0; i < MASTERS; i++) {
            firstSlots[i] = i * SLOTS / MASTERS;
        }
    }

    /** Starts a 3-master cluster and returns once every node reports it healthy. */
    public static RedisCluster start() {
        RedisBinary binary = RedisBinary.resolve();
        List<RedisServer> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < MASTERS; i++) {
                // One at a time: a started node holds its two ports, so the next pick avoids them.
                nodes.add(RedisServer.managed(RedisProcess.start(binary, FreePorts::findWithClusterBus, port -> List.of(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes-" + port + ".conf",
                        "--cluster-node-timeout", "5000"))));
            }
            RedisCluster cluster = new RedisCluster(nodes);
            cluster.form();
            LOG.info("started a Redis Cluster on ports {}", cluster.ports());
            return cluster;
        } catch (RuntimeException | Error e) {
            closeAll(nodes, e);
            throw e;
        }
    }

    private void form() {
        for (int i = 0; i < MASTERS; i++) {
            int last = i == MASTERS - 1 ? SLOTS - 1 : firstSlots[i + 1] - 1;
            // ADDSLOTS one by one in a single command: Redis 6.2 has no ADDSLOTSRANGE.
            List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = firstSlots[i]; slot <= last; slot++) {
                command.add(String.valueOf(slot));
            }
            nodes.get(i).admin(command.toArray(String[]::new));
        }
        for (int i = 1; i < MASTERS; i++) {
            nodes.get(0).admin("CLUSTER", "MEET", nodes.get(i).host(), String.valueOf(nodes.get(i).port()));
        }
        awaitHealthy();
    }

    /** Waits until every node says cluster_state:ok, knows every slot and sees 3 connected masters. */
    void awaitHealthy() {
        long deadline = System.nanoTime() + FORMATION_TIMEOUT.toNanos();
        String lastProblem = "";
        while (System.nanoTime() < deadline) {
            lastProblem = problem();
            if (lastProblem == null) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the cluster", e);
            }
        }
        StringBuilder message = new StringBuilder("Redis Cluster on ports " + ports() + " not healthy within "
                + FORMATION_TIMEOUT.toSeconds() + " s: " + lastProblem);
        for (RedisServer node : nodes) {
            message.append("\n--- log tail of node ").append(node.port()).append(":\n").append(node.logTail(15));
        }
        throw new IllegalStateException(message.toString());
    }

    /** @return what is still wrong, or null when the cluster is healthy */
    private String problem() {
        for (RedisServer node : nodes) {
            try {
                String info = (String) node.admin("CLUSTER", "INFO");
                if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:" + SLOTS)) {
                    return "node " + node.port() + " reports " + info.replace("\r\n", " ");
                }
                String topology = (String) node.admin("CLUSTER", "NODES");
                long masters = topology.lines()
                        .filter(line -> line.contains("master") && line.contains("connected")
                                && !line.contains("fail") && !line.contains("handshake"))
                        .count();
                if (masters != MASTERS) {
                    return "node " + node.port() + " sees " + masters + " connected masters:\n" + topology;
                }
            } catch (RuntimeException e) {
                return "node " + node.port() + " does not answer: " + e;
            }
        }
        return null;
    }

    /**
     * @return the key prefix of the tests on this cluster (see {@link RedisServer#keyPrefix()}); the
     *         cluster is always the support's own and flushed between tests, so it is only for
     *         tests shared with a single server
     */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** @return the three masters, in slot order */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** @return the master owning {@code key}'s slot */
    public RedisServer nodeFor(String key) {
        long slot = (Long) nodes.get(0).admin("CLUSTER", "KEYSLOT", key);
        for (int i = MASTERS - 1; i >= 0; i--) {
            if (slot >= firstSlots[i]) {
                return nodes.get(i);
            }
        }
        throw new IllegalStateException("slot " + slot + " of '" + key + "' out of range");
    }

    /**
     * @return a new, started connection factory on the cluster (command timeout 2 s, connect timeout
     *         1 s, adaptive and periodic topology refresh); two calls model two separate JVMs
     */
    public LettuceConnectionFactory connectionFactory() {
        return connectionFactory(ConnectionFactories.DEFAULT_COMMAND_TIMEOUT);
    }

    /** @return like {@link #connectionFactory()}, with the given command timeout */
    public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
        Objects.requireNonNull(commandTimeout, "commandTimeout");
        return factories.cluster(seeds(), commandTimeout, null, null);
    }

    /**
     * @return like {@link #connectionFactory()}, logging in as ACL user {@code username}, whom the
     *         test made on every node ({@code adminCommand("ACL", "SETUSER", ...)})
     */
    public LettuceConnectionFactory connectionFactory(String username, String password) {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        return factories.cluster(seeds(), ConnectionFactories.DEFAULT_COMMAND_TIMEOUT, username, password);
    }

    private List<String> seeds() {
        List<String> seeds = new ArrayList<>();
        for (RedisServer node : nodes) {
            seeds.add(node.host() + ":" + node.port());
        }
        return seeds;
    }

    /** @return calls per command, summed over the nodes (see {@link RedisServer#commandCalls()}) */
    public Map<String, Long> commandCalls() {
        Map<String, Long> calls = new HashMap<>();
        for (RedisServer node : nodes) {
            node.commandCalls().forEach((command, count) -> calls.merge(command, count, Long::sum));
        }
        return calls;
    }

    /** Closes every pub/sub client connection on every node. @return how many */
    public long killPubSubClients() {
        long killed = 0;
        for (RedisServer node : nodes) {
            killed += node.killPubSubClients();
        }
        return killed;
    }

    /** Deletes every key on every master. */
    public void flushAll() {
        nodes.forEach(RedisServer::flushAll);
    }

    /** @return the keys matching {@code pattern} on all nodes, sorted */
    public List<String> keys(String pattern) {
        List<String> keys = new ArrayList<>();
        for (RedisServer node : nodes) {
            keys.addAll(node.keys(pattern));
        }
        Collections.sort(keys);
        return keys;
    }

    /** @return {@code PTTL key} asked of the node owning the key's slot */
    public long pttl(String key) {
        return nodeFor(key).pttl(key);
    }

    /** Restarts stopped nodes and lifts pauses, then waits for the cluster to be healthy again. */
    void heal() {
        boolean restarted = false;
        for (RedisServer node : nodes) {
            restarted |= !node.isRunning();
            node.heal();
        }
        if (restarted) {
            awaitHealthy();
        }
    }

    /** @return a mark for {@link #destroyFactoriesSince(int)} */
    int factoryMark() {
        return factories.mark();
    }

    /** Destroys the connection factories handed out since {@code mark}. */
    void destroyFactoriesSince(int mark) {
        factories.destroySince(mark);
    }

    private List<Integer> ports() {
        List<Integer> ports = new ArrayList<>();
        nodes.forEach(node -> ports.add(node.port()));
        return ports;
    }

    /** Destroys the connection factories handed out, then stops every node. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            factories.destroyAll();
        } finally {
            RuntimeException failure = closeAll(nodes, null);
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** Closes every node even when one fails to close. @return the first failure not already in {@code cause} */
    private static RuntimeException closeAll(List<RedisServer> nodes, Throwable cause) {
        RuntimeException first = null;
        for (RedisServer node : nodes) {
            try {
                node.close();
            } catch (RuntimeException e) {
                if (cause != null) {
                    cause.addSuppressed(e);
                } else if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }

    @Override
    public String toString() {
        return "RedisCluster" + ports();
    }
}
