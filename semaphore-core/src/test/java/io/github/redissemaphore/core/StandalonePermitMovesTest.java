package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

/** Permits that move between processes, on a single Redis server. */
@RedisTest
class StandalonePermitMovesTest extends PermitMovesContract {

    StandalonePermitMovesTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
