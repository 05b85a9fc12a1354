package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

/** The engine's contract on a single Redis server. */
@RedisTest
class StandaloneCoreTest extends CoreSemaphoreContract {

    StandaloneCoreTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
