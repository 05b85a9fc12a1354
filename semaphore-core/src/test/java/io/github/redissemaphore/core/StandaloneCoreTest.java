package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

/** The engine's contract on a single Redis server. */
@RedisTest
class StandaloneCoreTest extends CoreSemaphoreContract {

    private final RedisTarget target;

    StandaloneCoreTest(RedisServer server) {
        this.target = new StandaloneTarget(server);
    }

    @Override
    protected RedisTarget target() {
        return target;
    }
}
