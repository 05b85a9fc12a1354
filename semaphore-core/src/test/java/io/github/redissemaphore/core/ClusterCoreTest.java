package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

/** The engine's contract on a 3-master Redis Cluster: every key of a semaphore in one slot. */
@RedisTest
class ClusterCoreTest extends CoreSemaphoreContract {

    ClusterCoreTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
    }
}
