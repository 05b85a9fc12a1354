package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

/** Waiting and hand-off on a 3-master Redis Cluster (grants published across nodes). */
@RedisTest
class ClusterWaitingTest extends WaitingContract {

    private final RedisTarget target;

    ClusterWaitingTest(RedisCluster cluster) {
        this.target = new ClusterTarget(cluster);
    }

    @Override
    protected RedisTarget target() {
        return target;
    }
}
