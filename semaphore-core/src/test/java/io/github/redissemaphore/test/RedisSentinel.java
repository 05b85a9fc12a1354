package io.github.redissemaphore.test;

import java.time.Duration;
import java.util.List;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.awaitility.Awaitility.await;

/**
 * A Sentinel setup out of local processes: a master, a replica of it and one Sentinel (quorum 1,
 * down after 1 s) watching them, for failover tests. Always processes, never {@code REDIS_URL}
 * or Docker, so the master can be killed.
 */
public final class RedisSentinel implements AutoCloseable {

    /** The name the Sentinel knows the master by. */
    public static final String MASTER_NAME = "semaphore-master";

    private final RedisServer master;
    private final RedisServer replica;
    private final RedisServer sentinel;
    private final ConnectionFactories factories = new ConnectionFactories();

    private RedisSentinel(RedisServer master, RedisServer replica, RedisServer sentinel) {
        this.master = master;
        this.replica = replica;
        this.sentinel = sentinel;
    }

    /** @return a running setup whose replica is in sync and whose Sentinel sees both */
    public static RedisSentinel start() {
        RedisBinary binary = RedisBinary.resolve();
        RedisServer master = RedisServer.managed(RedisProcess.start(binary));
        RedisServer replica = null;
        try {
            int masterPort = master.port();
            replica = RedisServer.managed(RedisProcess.start(binary, FreePorts::find,
                    port -> List.of("--replicaof", RedisProcess.HOST, String.valueOf(masterPort))));
            RedisServer sentinel = RedisServer.managed(RedisProcess.startSentinel(binary, MASTER_NAME, masterPort));
            RedisSentinel setup = new RedisSentinel(master, replica, sentinel);
            RedisServer syncing = replica;
            await().atMost(Duration.ofSeconds(20)).until(() -> syncing.info("replication")
                    .contains("master_link_status:up") && sentinel.info("sentinel").contains("slaves=1"));
            return setup;
        } catch (RuntimeException | Error e) {
            if (replica != null) {
                replica.close();
            }
            master.close();
            throw e;
        }
    }

    /** @return the server that was master when the setup started */
    public RedisServer master() {
        return master;
    }

    /** @return the server that was its replica when the setup started */
    public RedisServer replica() {
        return replica;
    }

    /** @return the port the master has now, as the Sentinel reports it */
    public int currentMasterPort() {
        String info = sentinel.info("sentinel");
        int at = info.indexOf("address=", info.indexOf("name=" + MASTER_NAME));
        return Integer.parseInt(info.substring(at + "address=".length()).split("[,\\r\\n]")[0].split(":")[1]);
    }

    /**
     * Asks the Sentinel for a failover, as an operator does ({@code SENTINEL FAILOVER}): the replica
     * is promoted while the master keeps running; the Sentinel demotes the old master later, when
     * it next sees it still reporting itself a master.
     */
    public void failover() {
        sentinel.adminCommand("SENTINEL", "FAILOVER", MASTER_NAME);
    }

    /** @return whether {@code server} reports itself a master ({@code role:master}) */
    public static boolean isMaster(RedisServer server) {
        return server.info("replication").contains("role:master");
    }

    /** @return a new, started connection factory that finds the master through the Sentinel */
    public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
        return factories.sentinel(new RedisSentinelConfiguration().master(MASTER_NAME)
                .sentinel(RedisProcess.HOST, sentinel.port()), commandTimeout);
    }

    @Override
    public void close() {
        factories.destroyAll();
        sentinel.close();
        replica.close();
        master.close();
    }
}
