package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/** The engine's contract on a 3-master Redis Cluster: every key of a semaphore in one slot. */
@Tag("slow")
@Tag("redis-compat")
@RedisTest
class ClusterCoreTest extends CoreSemaphoreContract {

    ClusterCoreTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
    }
}
