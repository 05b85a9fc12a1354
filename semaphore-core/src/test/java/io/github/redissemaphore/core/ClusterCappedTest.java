package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisCluster;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/**
 * Two-level limits on a 3-master Redis Cluster: every key of a capped semaphore, all its keys'
 * data and their sharded inbox channels in the one slot of its base name.
 */
@Tag("slow")
@Tag("redis-compat")
@RedisTest
class ClusterCappedTest extends CappedSemaphoreContract {

    ClusterCappedTest(RedisCluster cluster) {
        super(new ClusterTarget(cluster));
    }
}
