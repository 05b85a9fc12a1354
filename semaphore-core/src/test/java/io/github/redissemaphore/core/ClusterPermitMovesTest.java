package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/**
 * Permits that move between processes, on a 3-master Redis Cluster, where each JVM's inbox (which
 * tells the owner of a lease) is a channel in the semaphore's slot.
 */
@Tag("slow")
@Tag("redis-compat")
@RedisTest
class ClusterPermitMovesTest extends PermitMovesContract {

    ClusterPermitMovesTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
    }
}
