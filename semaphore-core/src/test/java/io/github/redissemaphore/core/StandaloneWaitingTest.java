package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

/** Waiting and hand-off on a single Redis server. */
@RedisTest
class StandaloneWaitingTest extends WaitingContract {

    private final RedisTarget target;

    StandaloneWaitingTest(RedisServer server) {
        this.target = new StandaloneTarget(server);
    }

    @Override
    protected RedisTarget target() {
        return target;
    }
}
