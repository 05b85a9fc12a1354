package io.github.redissemaphore.core;

import io.github.redissemaphore.test.RedisServer;
import io.github.redissemaphore.test.RedisTest;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link CoreSemaphoreContract} as the user of each {@link RestrictedOffering}: it passes, and Redis
 * refused the user nothing, so the library needs none of the commands these offerings take away.
 */
@Tag("redis-compat")
@Tag("slow")
@RedisTest
@ParameterizedClass(name = "{0}")
@EnumSource(RestrictedOffering.class)
class RestrictedCoreTest extends CoreSemaphoreContract {

    private final RestrictedOffering offering;
    private final RedisServer server;

    RestrictedCoreTest(RestrictedOffering offering, RedisServer server) {
        super(offering.on(server));
        this.offering = offering;
        this.server = server;
    }

    @AfterEach
    void redisRefusedNothing() {
        offering.assertRefusedNothing(server);
    }
}
