package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/** Waiting and hand-off on a single Redis server. */
@Tag("redis-compat")
@RedisTest
class StandaloneWaitingTest extends WaitingContract {

    StandaloneWaitingTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
