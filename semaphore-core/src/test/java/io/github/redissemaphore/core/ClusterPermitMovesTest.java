package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

/**
 * Permits that move between processes, on a 3-master Redis Cluster, where each JVM's inbox (which
 * tells the owner of a lease) is a channel in the semaphore's slot.
 */
@RedisTest
class ClusterPermitMovesTest extends PermitMovesContract {

    ClusterPermitMovesTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
    }
}
