package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/** The engine's contract on a single Redis server. */
@Tag("redis-compat")
@RedisTest
class StandaloneCoreTest extends CoreSemaphoreContract {

    StandaloneCoreTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
