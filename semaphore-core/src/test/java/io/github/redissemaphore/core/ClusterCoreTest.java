package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

/** The engine's contract on a 3-master Redis Cluster: every key of a semaphore in one slot. */
@RedisTest
class ClusterCoreTest extends CoreSemaphoreContract {

    private final RedisTarget target;

    ClusterCoreTest(RedisCluster cluster) {
        this.target = new ClusterTarget(cluster);
    }

    @Override
    protected RedisTarget target() {
        return target;
    }
}
