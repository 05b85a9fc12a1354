package io.github.redissemaphore.actuate;

import io.github.redissemaphore.actuate.EndpointTestApplication.GuardedService;
import io.github.redissemaphore.core.SemaphoreRegistry;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** What the endpoint's HTTP tests share: the port, the guarded service, callers on threads of their own. */
abstract class EndpointWebTestBase {

    @LocalServerPort
    protected int port;

    @Autowired
    protected GuardedService service;

    @Autowired
    protected SemaphoreRegistry registry;

    protected final ExecutorService callers = Executors.newCachedThreadPool();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        EndpointTestApplication.redis(properties);
    }

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }
}
