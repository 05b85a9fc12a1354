package io.github.redissemaphore.sample.embedded;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The embedded servers of this JVM, one per configured address they stand in for. Application
 * contexts of one JVM configured with the same address share it (two instances in one JVM, as in
 * the demo, must share one Redis to limit each other); it stops when the last of them lets go.
 */
final class EmbeddedRedisServers {

    private static final Map<RedisAddress, Shared> RUNNING = new HashMap<>();

    private EmbeddedRedisServers() {
    }

    /** @return a lease on the server already standing in for {@code address}, if there is one */
    static synchronized Optional<Lease> join(RedisAddress address) {
        return Optional.ofNullable(RUNNING.get(address)).map(shared -> shared.lease(false));
    }

    /**
     * @return a lease on the server standing in for {@code address}, started now unless another
     *         context of this JVM started one meanwhile ({@link Lease#started()} tells which)
     */
    static synchronized Lease startOrJoin(RedisAddress address) {
        Shared shared = RUNNING.get(address);
        if (shared != null) {
            return shared.lease(false);
        }
        shared = new Shared(address, EmbeddedRedisServer.start());
        RUNNING.put(address, shared);
        return shared.lease(true);
    }

    private static synchronized void release(Shared shared) {
        shared.users--;
        if (shared.users == 0) {
            RUNNING.remove(shared.address);
            shared.server.close();
        }
    }

    /** One server and how many contexts use it. */
    private static final class Shared {

        final RedisAddress address;
        final EmbeddedRedisServer server;
        int users;

        Shared(RedisAddress address, EmbeddedRedisServer server) {
            this.address = address;
            this.server = server;
        }

        Lease lease(boolean started) {
            users++;
            return new Lease(this, started);
        }
    }

    /** One context's use of a shared server; {@link #close()} when the context is done with it. */
    static final class Lease implements AutoCloseable {

        private final Shared shared;
        private final boolean started;
        private final AtomicBoolean released = new AtomicBoolean();

        private Lease(Shared shared, boolean started) {
            this.shared = shared;
            this.started = started;
        }

        /** @return the server */
        EmbeddedRedisServer server() {
            return shared.server;
        }

        /** @return whether this lease's request started the server (rather than joined it) */
        boolean started() {
            return started;
        }

        /** Lets go of the server, stopping it if no other context uses it. Idempotent. */
        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                release(shared);
            }
        }
    }
}
