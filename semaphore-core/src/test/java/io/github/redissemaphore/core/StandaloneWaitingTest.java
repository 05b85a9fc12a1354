package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

/** Waiting and hand-off on a single Redis server. */
@RedisTest
class StandaloneWaitingTest extends WaitingContract {

    StandaloneWaitingTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
