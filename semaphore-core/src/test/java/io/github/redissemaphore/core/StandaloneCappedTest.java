package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.Tag;

/** Two-level limits on a single Redis server. */
@Tag("redis-compat")
@RedisTest
class StandaloneCappedTest extends CappedSemaphoreContract {

    StandaloneCappedTest(RedisServer server) {
        super(new StandaloneTarget(server));
    }
}
