package io.github.redissemaphore.test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code redis:7} Testcontainers container, when a Docker engine answers.
 *
 * <p>Asking Testcontainers directly on a machine without Docker costs seconds and logs errors at
 * each strategy it tries, so a cheap check comes first: Testcontainers on the class path (it is
 * optional for modules reusing this test-jar), and a Docker socket or {@code DOCKER_HOST} that accepts
 * a connection (or a {@code ~/.testcontainers.properties} to leave the decision to it). The answer is
 * cached for the JVM.
 *
 * <p>Testcontainers types appear only in {@link Container}, which is loaded only after the check
 * passed, so the test support works without Testcontainers on the class path.
 */
final class DockerRedis {

    private static final Logger LOG = LoggerFactory.getLogger(DockerRedis.class);
    private static Boolean available;

    private DockerRedis() {
    }

    /** @return whether a Docker engine answers; fast and quiet when there is none */
    static synchronized boolean available() {
        if (available == null) {
            available = testcontainersPresent() && engineLikely() && Container.dockerAvailable();
            LOG.debug("Docker for Redis tests available: {}", available);
        }
        return available;
    }

    /** @return a started {@code redis:7} container as an owned, non-managed server, removed on close */
    static RedisServer start() {
        return Container.start();
    }

    private static boolean testcontainersPresent() {
        try {
            Class.forName("org.testcontainers.DockerClientFactory", false, DockerRedis.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private static boolean engineLikely() {
        String dockerHost = System.getenv("DOCKER_HOST");
        if (dockerHost != null && !dockerHost.isBlank()) {
            return answers(URI.create(dockerHost.trim()));
        }
        String home = System.getProperty("user.home", "");
        if (Files.exists(Paths.get(home, ".testcontainers.properties"))) {
            // Configured for Testcontainers (remote engine, cloud...): let it decide.
            return true;
        }
        List<Path> sockets = new ArrayList<>(List.of(
                Paths.get("/var/run/docker.sock"),
                Paths.get(home, ".docker/run/docker.sock"),
                Paths.get(home, ".docker/desktop/docker.sock"),
                Paths.get(home, ".colima/default/docker.sock"),
                Paths.get(home, ".rd/docker.sock")));
        String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
        if (runtimeDir != null && !runtimeDir.isBlank()) {
            sockets.add(Paths.get(runtimeDir, "docker.sock"));
            sockets.add(Paths.get(runtimeDir, "podman/podman.sock"));
        }
        return sockets.stream().anyMatch(DockerRedis::answers);
    }

    private static boolean answers(URI dockerHost) {
        if ("unix".equals(dockerHost.getScheme())) {
            return answers(Paths.get(dockerHost.getPath()));
        }
        if (dockerHost.getHost() == null) {
            return true; // an unusual form: let Testcontainers judge
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(dockerHost.getHost(), dockerHost.getPort() < 0 ? 2375 : dockerHost.getPort()),
                    1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean answers(Path socket) {
        if (!Files.exists(socket)) {
            return false;
        }
        try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            return channel.isConnected();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Everything touching Testcontainers classes. */
    private static final class Container {

        private static boolean dockerAvailable() {
            try {
                return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
            } catch (RuntimeException | LinkageError e) {
                return false;
            }
        }

        private static RedisServer start() {
            org.testcontainers.containers.GenericContainer<?> container =
                    new org.testcontainers.containers.GenericContainer<>(
                            org.testcontainers.utility.DockerImageName.parse("redis:7"))
                            .withExposedPorts(6379)
                            // Same behaviour as our processes: no persistence, DEBUG allowed.
                            .withCommand("redis-server", "--save", "", "--appendonly", "no",
                                    "--enable-debug-command", "yes");
            container.start();
            LOG.info("started Docker container {} with redis:7", container.getContainerId());
            return RedisServer.started(container.getHost(), container.getMappedPort(6379), "docker redis:7",
                    container::stop);
        }
    }
}
