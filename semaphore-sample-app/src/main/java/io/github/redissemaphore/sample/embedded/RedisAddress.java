package io.github.redissemaphore.sample.embedded;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * The standalone Redis an application is configured to use, read from {@code spring.data.redis.*}
 * the way Spring Boot reads it: {@code url} wins over {@code host} and {@code port}, which default to
 * {@code localhost:6379}.
 *
 * @param host as configured (a name or a literal address)
 * @param port as configured
 */
public record RedisAddress(String host, int port) {

    private static final String PREFIX = "spring.data.redis.";
    private static final int DEFAULT_PORT = 6379;

    /**
     * @return the configured standalone address; empty when Sentinel or Cluster is configured, whose
     *         nodes are not one address to stand in for
     */
    public static Optional<RedisAddress> configured(Environment environment) {
        if (environment.containsProperty(PREFIX + "sentinel.master")
                || environment.containsProperty(PREFIX + "cluster.nodes")) {
            return Optional.empty();
        }
        String url = environment.getProperty(PREFIX + "url");
        if (StringUtils.hasText(url)) {
            URI uri = URI.create(url.trim());
            if (uri.getHost() == null) {
                throw new IllegalArgumentException("spring.data.redis.url must look like redis://host:port, not " + url);
            }
            return Optional.of(new RedisAddress(uri.getHost(), uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort()));
        }
        return Optional.of(new RedisAddress(environment.getProperty(PREFIX + "host", "localhost"),
                environment.getProperty(PREFIX + "port", Integer.class, DEFAULT_PORT)));
    }

    /**
     * @return whether this names the machine itself ({@code localhost} or a loopback literal); names
     *         are not resolved, so this never waits for DNS
     */
    public boolean isLocal() {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return bare.equalsIgnoreCase("localhost")
                || bare.matches("127(\\.\\d{1,3}){3}")
                || bare.equals("::1")
                || bare.equals("0:0:0:0:0:0:0:1");
    }

    /** @return whether something accepts a TCP connection here within {@code timeout} */
    public boolean answers(Duration timeout) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
