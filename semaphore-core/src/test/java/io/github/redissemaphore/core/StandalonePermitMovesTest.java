package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/** Permits that move between processes, on a single Redis server. */
@Tag("redis-compat")
@RedisTest
class StandalonePermitMovesTest extends PermitMovesContract {

    StandalonePermitMovesTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
