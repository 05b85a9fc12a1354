package io.github.redissemaphore.test;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the Redis of a test comes from, for JUnit tests (through {@link RedisExtension}) and for
 * code outside JUnit: a benchmark's {@code main}, or Spring tests that need a URL before their
 * context starts ({@code registry.add("spring.data.redis.url", () -> RedisServers.shared().uri())}).
 *
 * <p>{@link #open()} finds a Redis in this order:
 * <ol>
 * <li>the server of system property {@code redis.test.url}, else of environment variable
 *     {@code REDIS_URL} ({@code redis://host:port}, no password), if set: not {@link RedisServer#owned()
 *     owned}, so its tests write and delete only keys under their handle's
 *     {@link RedisServer#keyPrefix() prefix} and never fault it (see {@link RedisServer});</li>
 * <li>a Testcontainers {@code redis:7} container, if a Docker engine answers;</li>
 * <li>a {@code redis-server} on the PATH, run as a child process on a free port;</li>
 * <li>else the linux/mac {@code redis-server} inside the {@code com.github.codemonstur:embedded-redis}
 *     jar, extracted to a temp file and run exactly like the one from the PATH.</li>
 * </ol>
 * {@link #start()} only uses 3 and 4: it always starts a process of its own.
 *
 * <p>System property {@code redis.test.binary} (or environment variable {@code REDIS_TEST_BINARY})
 * narrows the choice of 2 to 4 and of {@code REDIS_URL}: {@code auto} (default) as above; {@code path}
 * only a {@code redis-server} on the PATH (no REDIS_URL, no Docker, no fallback); {@code embedded}
 * only the binary of the jar (no REDIS_URL, Docker or PATH), which proves the last fallback works:
 * {@code REDIS_TEST_BINARY=embedded ./mvnw test}. Property {@code redis.test.url} is always honoured.
 */
public final class RedisServers {

    /** Read before {@code REDIS_URL}: lets a test point the support at a server without touching the environment. */
    public static final String URL_PROPERTY = "redis.test.url";

    private static final Logger LOG = LoggerFactory.getLogger(RedisServers.class);
    private static RedisServer shared;

    private RedisServers() {
    }

    /**
     * Starts a new {@code redis-server} process on a free port (PATH or embedded binary, as
     * {@code redis.test.binary} says); the caller closes it.
     *
     * @return a managed server: it can be stopped, restarted and killed
     */
    public static RedisServer start() {
        return start(RedisBinary.Choice.configured());
    }

    /**
     * Like {@link #start()}, on {@code port} of 127.0.0.1 rather than a free port of its choosing: to
     * bring a Redis back where other processes expect one. Fails if that port is taken.
     *
     * @return a managed server: it can be stopped, restarted and killed
     */
    public static RedisServer startOn(int port) {
        return RedisServer.managed(RedisProcess.startOn(RedisBinary.resolve(), port));
    }

    /**
     * Like {@link #start()}, with {@code extraArguments} after the common ones, e.g. an ACL user:
     * {@code List.of("--user", "app", "on", ">secret", "~app:*", "resetchannels", "&app:*", "+ping")}
     * (each ACL rule one argument). A restart ({@link RedisServer#start()}) starts with them again,
     * so such users survive it, unlike those made with {@code ACL SETUSER}. The {@code default}
     * user stays as it is (no password, every right): the admin calls of the support use it.
     *
     * @return a managed server: it can be stopped, restarted and killed
     */
    public static RedisServer start(List<String> extraArguments) {
        List<String> arguments = List.copyOf(extraArguments);
        return RedisServer.managed(RedisProcess.start(RedisBinary.resolve(), FreePorts::find, port -> arguments));
    }

    /**
     * Like {@link #start()}, the {@code redis-server} run by the command {@code wrapper} rather than
     * directly, at this start and at every restart: e.g. {@code valgrind --tool=callgrind ...} for a
     * benchmark that counts the server's instructions. The wrapper must end by executing its last
     * arguments (the executable and its arguments) in its own process, as {@code valgrind} and a
     * shell's {@code exec "$@"} do: start-up waits for the process it started to answer.
     *
     * @return a managed server: it can be stopped, restarted and killed
     */
    public static RedisServer startWrapped(List<String> wrapper) {
        if (wrapper.isEmpty()) {
            throw new IllegalArgumentException("wrapper must name a program to run redis-server with, but was empty");
        }
        return RedisServer.managed(RedisProcess.startWrapped(RedisBinary.resolve(), wrapper));
    }

    /**
     * Starts a new {@code redis-server} process that also listens for TLS on
     * {@link RedisServer#tlsPort()} (127.0.0.1), with the server certificate and key of
     * {@code certificates}, trusting their CA, without client certificates
     * ({@code --tls-auth-clients no}); {@code extraArguments} come last, as for
     * {@link #start(List)}. The plain {@link RedisServer#port()} stays open for the admin calls.
     *
     * @throws TlsUnsupportedException when this {@code redis-server} was built without TLS; a test
     *                                 may turn that into a skipped test (a JUnit assumption)
     */
    public static RedisServer startTls(TestCertificates certificates, List<String> extraArguments) {
        List<String> arguments = List.copyOf(extraArguments);
        RedisBinary binary = RedisBinary.resolve();
        try {
            return RedisServer.managed(RedisProcess.start(binary, FreePorts::find, port -> {
                List<String> tls = new ArrayList<>(List.of(
                        // A port of its own per attempt: a taken one fails the start like a taken
                        // plain port ("Address already in use"), and the next attempt picks both anew.
                        "--tls-port", String.valueOf(FreePorts.find()),
                        "--tls-cert-file", certificates.serverCertificate().toString(),
                        "--tls-key-file", certificates.serverKey().toString(),
                        "--tls-ca-cert-file", certificates.caCertificate().toString(),
                        "--tls-auth-clients", "no"));
                tls.addAll(arguments);
                return tls;
            }));
        } catch (IllegalStateException e) {
            String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
            // Redis 6/7.0 built without TLS do not know the tls-* options ("Bad directive"); 7.2+
            // say "Missing implement of connection type tls".
            if (message.contains("tls") && (message.contains("not supported") || message.contains("bad directive")
                    || message.contains("unknown") || message.contains("not built")
                    || message.contains("missing implement"))) {
                throw new TlsUnsupportedException(binary + " cannot serve TLS (built without it): " + e.getMessage(), e);
            }
            throw e;
        }
    }

    /** The {@code redis-server} at hand was built without TLS support. */
    public static final class TlsUnsupportedException extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        TlsUnsupportedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Like {@link #start()} with the binary of {@code choice}; package-private for the support's tests. */
    static RedisServer start(RedisBinary.Choice choice) {
        return RedisServer.managed(RedisProcess.start(RedisBinary.resolve(choice)));
    }

    /**
     * Finds or starts a Redis in the order of the class description; the caller closes it (which
     * stops it if started here).
     *
     * @return a new handle: managed only if a process was started
     */
    public static RedisServer open() {
        // The property is a test's own choice of server (RedisUrlIsLeftIntactTest), so it holds
        // whatever binary is chosen; only the user's REDIS_URL and Docker depend on the choice.
        String property = System.getProperty(URL_PROPERTY);
        if (property != null && !property.isBlank()) {
            return fromUrl(URL_PROPERTY, property.trim());
        }
        RedisBinary.Choice choice = RedisBinary.Choice.configured();
        if (choice == RedisBinary.Choice.AUTO) {
            String url = System.getenv("REDIS_URL");
            if (url != null && !url.isBlank()) {
                return fromUrl("REDIS_URL", url.trim());
            }
            if (DockerRedis.available()) {
                return DockerRedis.start();
            }
        }
        return start(choice);
    }

    /**
     * @return one server for the whole JVM, found like {@link #open()} on first use and closed at JVM
     *         exit; its {@link RedisServer#close()} does nothing, as others may still use it
     */
    public static synchronized RedisServer shared() {
        if (shared == null) {
            RedisServer server = open().unclosable();
            ProcessReaper.closeAtExit(server::closeNow);
            shared = server;
        }
        return shared;
    }

    private static RedisServer fromUrl(String source, String url) {
        URI uri = URI.create(url);
        if (!"redis".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException(source + " must look like redis://host:port, not " + url);
        }
        RedisServer server = RedisServer.foreign(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort(), source);
        try {
            RespConnection.call(server.host(), server.port(), Duration.ofSeconds(5), "PING");
        } catch (RuntimeException e) {
            throw new IllegalStateException(source + "=" + url + " does not answer PING", e);
        }
        LOG.info("using the Redis of {} at {}: keys under {} only, no faults", source, server.uri(),
                server.keyPrefix());
        return server;
    }
}
