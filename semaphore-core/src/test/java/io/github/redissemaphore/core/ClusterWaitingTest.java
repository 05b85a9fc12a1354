package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

/** Waiting and hand-off on a 3-master Redis Cluster (grants published across nodes). */
@RedisTest
class ClusterWaitingTest extends WaitingContract {

    ClusterWaitingTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
    }
}
